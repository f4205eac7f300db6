package i18n

// The note kioku posts once in a server's system channel when it joins.
func init() {
	Register(map[Key]Text{
		"welcome.title": {EN: "Hello, I'm kioku 👋", JA: "こんにちは、kiokuです 👋"},
		"welcome.description": {
			EN: "I'm a chat bot with a memory: mention me to talk, and I remember what this server asks me to, so I can answer with it later.",
			JA: "記憶を持つチャットボットです。メンションで話しかけてください。このサーバーで頼まれたことを覚えて、後の返答に役立てます。",
		},
		"welcome.remembers": {EN: "What I remember", JA: "覚えること"},
		"welcome.remembers.value": {
			EN: "What people ask me to remember (by talking to me, with /memory add or with the \"Remember this\" message menu) and, unless an admin turns it off, facts I learn in the background from conversations with me. Personal memories belong to their owner and never reach anyone else.",
			JA: "頼まれたこと(話しかける、/memory add、メッセージメニューの「これを覚えて」)と、管理者がオフにしない限り、私との会話からバックグラウンドで学んだ事実です。個人の記憶は持ち主だけのもので、他の人には届きません。",
		},
		"welcome.see": {EN: "See and delete it", JA: "確認と削除"},
		"welcome.see.value": {
			EN: "/memory list and /memory search show what I remember; /memory forget removes a memory (recoverable for a while with /memory recover); /memory forget-me erases everything I hold about you; /privacy sets how I may use what you say.",
			JA: "/memory list と /memory search で覚えていることを確認できます。/memory forget で削除(しばらくは /memory recover で復元可能)、/memory forget-me であなたの情報をすべて消去、/privacy で私があなたの発言をどう使うかを設定できます。",
		},
		"welcome.admins": {EN: "For admins", JA: "管理者向け"},
		"welcome.admins.value": {
			EN: "/kioku config opens the settings panel: language, background learning, self-teaching, who may edit server memory, auto-reply channels. /kioku status shows memory counts, the background queue and health.",
			JA: "/kioku config で設定パネルを開けます:言語、バックグラウンド学習、自己学習、サーバーの記憶の編集者、自動返信チャンネル。/kioku status で記憶件数、バックグラウンド処理、健全性を確認できます。",
		},
		"welcome.footer": {EN: "I post this note once, when I join a server.", JA: "この案内はサーバー参加時に一度だけ投稿します。"},
	})
}
