package memory_test

import (
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

// All values below are made up; they have a credential's shape and nothing else.

// secretVector is a text holding a credential, and the parts of it that must not survive
// redaction.
type secretVector struct {
	in      string
	secrets []string
}

// secretCases lists, per credential type of SPEC §2, texts that must be caught and
// near misses that must not.
var secretCases = []struct {
	name      string
	kind      string
	positives []secretVector
	negatives []string
}{
	{
		name: "PrivateKeyBlock", kind: "private key",
		positives: []secretVector{
			{"here is my key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEFAKEbodyLINEone0123\nFAKEbodyLINEtwo4567==\n-----END RSA PRIVATE KEY-----\nthanks",
				[]string{"MIIEFAKEbodyLINEone0123", "FAKEbodyLINEtwo4567", "BEGIN RSA PRIVATE KEY"}},
			{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaFAKEkeyBODY0001\nAAAAFAKEkeyBODY0002",
				[]string{"b3BlbnNzaFAKEkeyBODY0001", "AAAAFAKEkeyBODY0002"}},
			{"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBFAKEpgpBODY0003\n=FAKE\n-----END PGP PRIVATE KEY BLOCK-----",
				[]string{"lQOYBFAKEpgpBODY0003", "=FAKE"}},
			{"collapsed -----BEGIN PRIVATE KEY----- MIIEvFAKEcollapsed0004 -----END PRIVATE KEY----- ok",
				[]string{"MIIEvFAKEcollapsed0004"}},
			{"PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\nAAAAIFAKEputtyBODY0005\nPrivate-MAC: 0123abcd",
				[]string{"AAAAIFAKEputtyBODY0005"}},
		},
		negatives: []string{
			"-----BEGIN PUBLIC KEY-----\nMIIBFAKEpublic\n-----END PUBLIC KEY-----",
			"-----BEGIN CERTIFICATE-----\nMIIFAKEcert\n-----END CERTIFICATE-----",
			"keep your private key private",
		},
	},
	{
		name: "DiscordToken", kind: "Discord token",
		positives: []secretVector{
			{"bot token MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.FAKEfakeFAKEfakeFAKEfake0123456", []string{"FAKEfakeFAKEfakeFAKEfake0123456"}},
			{"Bot OTg3NjU0MzIxMDk4NzY1NDMy.Gx9_Yz.FAKE-fake_FAKE-fake_FAKE-fake_FAKE-f", []string{"OTg3NjU0MzIxMDk4NzY1NDMy", "FAKE-fake_FAKE-fake"}},
		},
		negatives: []string{
			"MyCompanyInternalService.config.abcdefghijklmnopqrstuvwxyz0",
			"MTIzNDU2Nzg5MDEyMzQ1Njc4 without the other parts",
		},
	},
	{
		name: "DiscordWebhook", kind: "Discord webhook token",
		positives: []secretVector{
			{"https://discord.com/api/webhooks/123456789012345678/FAKEwebhookTOKEN0123456789abcdef", []string{"FAKEwebhookTOKEN0123456789abcdef"}},
			{"hook: https://discordapp.com/api/webhooks/1/FAKE_webhook-token_0123456789", []string{"FAKE_webhook-token_0123456789"}},
		},
		negatives: []string{"https://discord.com/api/webhooks are documented online"},
	},
	{
		name: "OpenAIKey", kind: "OpenAI key",
		positives: []secretVector{
			{"my key is sk-proj-FAKEfake0123456789abcdefFAKE", []string{"FAKEfake0123456789abcdefFAKE"}},
			{"OPENAI_API_KEY=sk-FAKE1234567890abcdefghijkl", []string{"FAKE1234567890abcdefghijkl"}},
			{"sk-svcacct-FAKE_0123456789_abcdefghij", []string{"FAKE_0123456789_abcdefghij"}},
		},
		negatives: []string{"sk-8", "I use sk-learn-is-a-python-library", "task-0123456789abcdefghijklmnop"},
	},
	{
		name: "AnthropicKey", kind: "Anthropic key",
		positives: []secretVector{
			{"sk-ant-api03-FAKE0123456789abcdefghijklmnop", []string{"FAKE0123456789abcdefghijklmnop"}},
			{"ANTHROPIC_API_KEY: sk-ant-FAKEfake0123456789FAKEfake", []string{"FAKEfake0123456789FAKEfake"}},
		},
		negatives: []string{"sk-ant-colony-optimisation-algorithm", "sk-ant-"},
	},
	{
		name: "GitHubToken", kind: "GitHub token",
		positives: []secretVector{
			{"ghp_FAKE0123456789abcdefghijklmnopqrstu", []string{"FAKE0123456789abcdefghijklmnopqrstu"}},
			{"clone with gho_FAKEfake0123456789FAKEfake0123456789", []string{"FAKEfake0123456789FAKEfake0123456789"}},
			{"github_pat_11FAKE0000_FAKEfake0123456789FAKEfake0123456789abcdef", []string{"FAKEfake0123456789FAKEfake0123456789abcdef"}},
		},
		negatives: []string{"ghp_short123", "ghx_0123456789abcdefghijklmnopqrstuvwxyz", "the github_pat_ prefix"},
	},
	{
		name: "AWSAccessKeyID", kind: "AWS access key",
		positives: []secretVector{
			{"key id AKIAIOSFODNN7EXAMPLE", []string{"AKIAIOSFODNN7EXAMPLE"}},
			{"temporary: ASIAIOSFODNN7EXAMPLE.", []string{"ASIAIOSFODNN7EXAMPLE"}},
		},
		negatives: []string{"AKIA1234", "AKIAIOSFODNN7EXAMPL", "myAKIAIOSFODNN7EXAMPLE"},
	},
	{
		name: "AWSSecretAccessKey", kind: "AWS secret access key",
		positives: []secretVector{
			{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}},
			{"AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEFAKEKY", []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEFAKEKY"}},
			{"my secret access key is wJalrXUtnFEMI+K7MDENG+bPxRfiCYEXAMPLEKEY", []string{"wJalrXUtnFEMI+K7MDENG+bPxRfiCYEXAMPLEKEY"}},
			{"Secret Access Key\twJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}},
			{"AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AKIAIOSFODNN7EXAMPLE"}},
		},
		negatives: []string{
			"the secret key is abcdefghijabcdefghijabcdefghijabcdefghij",
			"secret access key rotation happens every ninety days",
			"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY with no label and no key id",
		},
	},
	{
		name: "SlackToken", kind: "Slack token",
		positives: []secretVector{
			{"xoxb-0000FAKE-1111-abcdefFAKE", []string{"0000FAKE-1111-abcdefFAKE"}},
			{"app token xapp-1-A0FAKE-1234-abcdef", []string{"A0FAKE-1234-abcdef"}},
		},
		negatives: []string{"xoxb-short", "xoxo-hugs-and-kisses-to-everyone"},
	},
	{
		name: "SlackWebhook", kind: "Slack webhook",
		positives: []secretVector{
			{"https://hooks.slack.com/services/T0FAKE000/B0FAKE000/FAKEfakeFAKEfake0123", []string{"FAKEfakeFAKEfake0123"}},
			{"post to hooks.slack.com/services/TFAKE/BFAKE/0123456789abcdefFAKE", []string{"0123456789abcdefFAKE"}},
		},
		negatives: []string{"hooks.slack.com/services/ is where webhooks live"},
	},
	{
		name: "JWT", kind: "JWT",
		positives: []secretVector{
			{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", []string{"dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJzdWIiOiIxMjM0NTY3ODkwIn0"}},
			{"session=eyJGQUtFIjoxfQFAKE.eyJGQUtFIjoyfQFAKE.FAKEsignature0123", []string{"FAKEsignature0123", "eyJGQUtFIjoyfQFAKE"}},
		},
		negatives: []string{"eyJhbGciOi alone", "eyJ.eyJ.sig"},
	},
	{
		name: "AuthorizationHeader", kind: "bearer token",
		positives: []secretVector{
			{"Authorization: Bearer FAKEtoken0123456789abcdef", []string{"FAKEtoken0123456789abcdef"}},
			{"curl -H 'authorization: basic ZkFLRTpGQUtF' https://example.com", []string{"ZkFLRTpGQUtF"}},
			{`{"Authorization": "Bot FAKEbotToken_0123456"}`, []string{"FAKEbotToken_0123456"}},
		},
		negatives: []string{"Authorization: Bearer <token>", "authorization is handled by the proxy", "Authorization: none"},
	},
	{
		name: "BareBearer", kind: "bearer token",
		positives: []secretVector{
			{"use Bearer FAKE0123456789abcdefghij for the api", []string{"FAKE0123456789abcdefghij"}},
			{"bearer abc.def-ghi_0123456789FAKE", []string{"abc.def-ghi_0123456789FAKE"}},
		},
		negatives: []string{"Bearer of bad news", "bearer tokens-are-great-for-everyone-here", "bearer 12345678901234567890123"},
	},
	{
		name: "URLPassword", kind: "password",
		positives: []secretVector{
			{"postgres://app:hunter2hunter2@db.internal:5432/app", []string{"hunter2hunter2"}},
			{"https://user:FAKEpass0123@example.com/path", []string{"FAKEpass0123"}},
		},
		negatives: []string{"https://example.com:8080/path", "mailto:someone@example.com"},
	},
	{
		name: "StripeKey", kind: "Stripe key",
		positives: []secretVector{
			{"sk_live_FAKE0123456789abcdef", []string{"FAKE0123456789abcdef"}},
			{"key rk_test_FAKEfakeFAKEfake0123", []string{"FAKEfakeFAKEfake0123"}},
		},
		negatives: []string{"sk_live_short"},
	},
	{
		name: "GoogleAPIKey", kind: "Google API key",
		positives: []secretVector{
			{"AIzaSyFAKE0123456789abcdefghijklmnopqrs", []string{"SyFAKE0123456789abcdefghijklmnopqrs"}},
			{"maps key=AIzaFAKEfakeFAKEfake0123456789_abcdefgh", []string{"FAKEfakeFAKEfake0123456789_abcdefgh"}},
		},
		negatives: []string{"AIzaShort"},
	},
	{
		name: "PasswordPair", kind: "password",
		positives: []secretVector{
			{"password=hunter22", []string{"hunter22"}},
			{"DB_PASSWORD=hunter2hunter2", []string{"hunter2hunter2"}},
			{"export MYSQL_ROOT_PASSWORD='s3cr3t pass phrase'", []string{"s3cr3t pass phrase"}},
			{"Password: correcthorse", []string{"correcthorse"}},
			{"passwd = opensesame", []string{"opensesame"}},
			{"Server=db;Uid=app;Pwd=FAKEpwd1;", []string{"FAKEpwd1"}},
			{"SMTP_PASS=mailpass", []string{"mailpass"}},
			{"mysql --password=dbpass99", []string{"dbpass99"}},
			{"パスワード：hunter2x", []string{"hunter2x"}},
			{`{"password": "p4ss w0rd"}`, []string{"p4ss w0rd"}},
		},
		negatives: []string{
			"my password is hard to remember", "password=abc", "password: ${DB_PASSWORD}", "password=****",
			"DB_PASSWORD=", "pwd: /home/me", "KIOKU_DB_PASSWORD=your-db-password", "bypass=true", "password=false", "passwords: reset monthly? no",
		},
	},
	{
		name: "SecretPair", kind: "secret",
		positives: []secretVector{
			{"client_secret=FAKEclientSECRET", []string{"FAKEclientSECRET"}},
			{`{"client_secret": "FAKE-client-secret"}`, []string{"FAKE-client-secret"}},
			{"JWT_SECRET: changeme123", []string{"changeme123"}},
			{"secret=opensesame", []string{"opensesame"}},
			{"Secret: hunter2hunter2", []string{"hunter2hunter2"}},
		},
		negatives: []string{"Secret: don't tell anyone", "the secret ingredient is love", "secret: abc"},
	},
	{
		name: "APIKeyPair", kind: "key",
		positives: []secretVector{
			{"api_key=FAKE1234abcd", []string{"FAKE1234abcd"}},
			{"apikey: FAKEkeyvalue", []string{"FAKEkeyvalue"}},
			{"STRIPE_API_KEY=FAKEstripe99", []string{"FAKEstripe99"}},
			{"x-api-key: FAKE0123", []string{"FAKE0123"}},
		},
		negatives: []string{"the api key is in the vault", "api_key=<your key>", "monkey=banana", "APIKey: cfg.LLMAPIKey,"},
	},
	{
		name: "TokenPair", kind: "token",
		positives: []secretVector{
			{"access_token=FAKEaccess0123", []string{"FAKEaccess0123"}},
			{`token := "FAKEgo0123456789"`, []string{"FAKEgo0123456789"}},
			{"refresh_token: FAKErefresh", []string{"FAKErefresh"}},
			{"token: FAKE1234abcd5678", []string{"FAKE1234abcd5678"}},
			{"SLACK_BOT_TOKEN=FAKEslack", []string{"FAKEslack"}},
			{"https://example.com/cb?token=FAKEquery0123&x=1", []string{"FAKEquery0123"}},
		},
		negatives: []string{
			"the token system in our game", "the token economy of board games", "token: 5",
			"Token: the unit of text a model reads", "max_tokens=1024", "tokenizer=bert",
			"token := hex.EncodeToString(raw[:])", "token := strings.TrimPrefix(id, prefix)",
		},
	},
}

// newSecretCases are the kinds SecretRulesVersion 2 added. Every card number below is a
// documented test number or fails nothing but the Luhn check on purpose.
var newSecretCases = []struct {
	name      string
	kind      string
	positives []secretVector
	negatives []string
}{
	{
		name: "SpokenPassword", kind: "password",
		positives: []secretVector{
			{"my password is hunter2", []string{"hunter2"}},
			{"the wifi password is FAKEwifi99!", []string{"FAKEwifi99"}},
			{"Our passcode was 'swordfish' until today", []string{"swordfish"}},
			{"the new password is now Tr0ub4dorFAKE.", []string{"Tr0ub4dorFAKE"}},
		},
		negatives: []string{
			"my password is hard to remember", "password reset links expire in an hour",
			"the password is too short", "your password is <redacted>", "passwords are stored hashed",
		},
	},
	{
		name: "PIN", kind: "PIN",
		positives: []secretVector{
			{"my PIN is 1234", []string{"1234"}},
			{"the pin code: 864209, don't tell", []string{"864209"}},
			{"暗証番号は0731です", []string{"0731"}},
			{"暗証番号：９９８８", []string{"９９８８"}},
		},
		negatives: []string{"pin the message please", "PIN 3 of the header", "the pin is 12", "spinning at 3000 rpm"},
	},
	{
		name: "JapanesePassword", kind: "password",
		positives: []secretVector{
			{"パスワードはabc12345です", []string{"abc12345"}},
			{"wifiのパスワードが「FAKEpass」だよ", []string{"FAKEpass"}},
			{"パスコードはFake0000。", []string{"Fake0000"}},
		},
		negatives: []string{"パスワードを忘れました", "パスワードは変更しました", "パスワードはabcです"},
	},
	{
		name: "Passphrase", kind: "password",
		positives: []secretVector{
			{"Password: correct horse battery staple", []string{"correct", "horse", "battery", "staple"}},
			{"wifi password: purple monkey dishwasher fake\nssid: home", []string{"purple", "monkey", "dishwasher"}},
			{"パスワード：fake phrase here。よろしく", []string{"fake phrase here"}},
		},
		negatives: []string{"password: ${DB_PASSWORD}", "Password: <your passphrase here>"},
	},
	{
		name: "CardNumber", kind: "card number",
		positives: []secretVector{
			{"card 4111 1111 1111 1111 exp 12/31", []string{"4111 1111 1111 1111", "1111 1111"}},
			{"pay with 5555-5555-5555-4444 please", []string{"5555-5555-5555-4444"}},
			{"amex 378282246310005.", []string{"378282246310005"}},
			{"4242424242424242 2031", []string{"4242424242424242"}},
			{"amex 3782 822463 10005", []string{"3782 822463 10005", "822463"}},
		},
		negatives: []string{
			"4111 1111 1111 1112", "4111111111111112", "user 1234567890123456789 joined",
			"<@123456789012345678>", "<@400000000000000010> and <#4111111111111111>", "version 4.111.1111.1111.1111", "order id_4111111111111111",
			"call 0049 1512 3456 789", "dates 2024-01-15 2024-02-20",
		},
	},
	{
		name: "HuggingFaceToken", kind: "Hugging Face token",
		positives: []secretVector{
			{"hf_FAKEfakeFAKEfake0123456789abcdefgh", []string{"FAKEfakeFAKEfake0123456789abcdefgh"}},
			{"HF_TOKEN=hf_FAKE0000000000000000000000000000xx", []string{"FAKE0000000000000000000000000000xx"}},
		},
		negatives: []string{"set hf_transfer for faster downloads", "hf_hub_download_cache_directory_name"},
	},
	{
		name: "GitLabToken", kind: "GitLab token",
		positives: []secretVector{
			{"glpat-FAKEfake0123456789ab", []string{"FAKEfake0123456789ab"}},
			{"token glpat-FAKE_fake-0123456789abcdef", []string{"FAKE_fake-0123456789abcdef"}},
		},
		negatives: []string{"glpat-", "the glpat-prefix-names-personal-tokens"},
	},
	{
		name: "NPMToken", kind: "npm token",
		positives: []secretVector{
			{"npm_FAKEfake0123456789FAKEfake0123456789", []string{"FAKEfake0123456789FAKEfake0123456789"}},
			{"//registry.npmjs.org/:_authToken npm_FAKE00000000000000000000000000000000", []string{"FAKE00000000000000000000000000000000"}},
		},
		negatives: []string{"npm_config_cache", "run npm_package_version_and_other_variables"},
	},
	{
		name: "SlackUserToken", kind: "Slack token",
		positives: []secretVector{
			{"xoxp-0000FAKE-1111-2222-abcdefFAKE", []string{"0000FAKE-1111-2222-abcdefFAKE"}},
			{"xoxb-1111FAKE-2222-fakeFAKEfake", []string{"1111FAKE-2222-fakeFAKEfake"}},
		},
		negatives: []string{"xoxp-", "xoxb-prefix-means-bot"},
	},
	{
		name: "StripeLiveKey", kind: "Stripe key",
		positives: []secretVector{
			{"sk_live_FAKEfakeFAKEfake0000", []string{"FAKEfakeFAKEfake0000"}},
			{"STRIPE=rk_live_FAKE0000fake0000", []string{"FAKE0000fake0000"}},
		},
		negatives: []string{"sk_live_ is the prefix of live keys"},
	},
	{
		name: "JWTNearMisses", kind: "JWT",
		positives: []secretVector{
			{"Cookie: id=eyJGQUtFIjoiMSJ9.eyJGQUtFIjoiMiJ9.FAKEsig_0123", []string{"FAKEsig_0123"}},
			{"eyJhbGciOiJub25lIn0.eyJGQUtFIjp0cnVlfQ.FAKEfakeFAKE", []string{"FAKEfakeFAKE"}},
		},
		negatives: []string{"kioku v1.23.456 released", "eyJhbGciOiJub25lIn0.notjson.sig", "sk-ant is an acronym in our notes"},
	},
}

func init() { secretCases = append(secretCases, newSecretCases...) }

func TestDetectSecret(t *testing.T) {
	for _, tc := range secretCases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.positives) < 2 || len(tc.negatives) < 1 {
				t.Fatalf("need at least two positive and one negative vector")
			}
			for _, v := range tc.positives {
				kind, ok := memory.DetectSecret(v.in)
				if !ok {
					t.Errorf("DetectSecret(%q) = false, want %s", v.in, tc.kind)
				} else if kind != tc.kind && !strings.Contains(v.in, "AKIA") {
					t.Errorf("DetectSecret(%q) = %s, want %s", v.in, kind, tc.kind)
				}
			}
			for _, in := range tc.negatives {
				if kind, ok := memory.DetectSecret(in); ok {
					t.Errorf("DetectSecret(%q) = %s, want none", in, kind)
				}
				if got := memory.RedactSecrets(in); got != in {
					t.Errorf("RedactSecrets(%q) = %q, want it unchanged", in, got)
				}
			}
		})
	}
}

// TestRedactSecrets checks that redaction and detection agree: what is detected is
// removed entirely, the result is no longer detected, and redacting again changes
// nothing.
func TestRedactSecrets(t *testing.T) {
	for _, tc := range secretCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range tc.positives {
				for _, in := range []string{v.in, "before " + v.in + " after", v.in + "\n" + v.in} {
					got := memory.RedactSecrets(in)
					for _, s := range v.secrets {
						if strings.Contains(got, s) {
							t.Errorf("RedactSecrets(%q) = %q, still holds %q", in, got, s)
						}
					}
					if !strings.Contains(got, "[redacted ") {
						t.Errorf("RedactSecrets(%q) = %q, no redaction marker", in, got)
					}
					if kind, ok := memory.DetectSecret(got); ok {
						t.Errorf("DetectSecret(RedactSecrets(%q)) = %s in %q, want none", in, kind, got)
					}
					if again := memory.RedactSecrets(got); again != got {
						t.Errorf("RedactSecrets is not idempotent: %q then %q", got, again)
					}
				}
			}
		})
	}
}

func TestRedactSecretsKeepsTheSentence(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"DB_PASSWORD=hunter2hunter2", "DB_PASSWORD=[redacted password]"},
		{"set DB_PASSWORD=hunter2hunter2 and restart", "set DB_PASSWORD=[redacted password] and restart"},
		{`{"client_secret": "FAKE-client-secret", "id": 7}`, `{"client_secret": "[redacted secret]", "id": 7}`},
		{"GITHUB_TOKEN=ghp_FAKE0123456789abcdefghijklmnopqrstu", "GITHUB_TOKEN=[redacted GitHub token]"},
		{"Authorization: Bearer FAKEtoken0123456789abcdef", "Authorization: Bearer [redacted bearer token]"},
		{"postgres://app:hunter2hunter2@db/app", "postgres://app:[redacted password]@db/app"},
		{"key:\n-----BEGIN EC PRIVATE KEY-----\nFAKEbody\n-----END EC PRIVATE KEY-----\nthanks!", "key:\n[redacted private key]\nthanks!"},
		{"key: -----BEGIN PRIVATE KEY-----\nFAKEbody\nFAKEmore", "key: [redacted private key]"},
		{"I prefer green tea", "I prefer green tea"},
	} {
		if got := memory.RedactSecrets(tt.in); got != tt.want {
			t.Errorf("RedactSecrets(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
