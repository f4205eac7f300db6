package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// A bulk action's batch travels from its preview to its apply, and from the apply to its
// undo, in a hidden form field rather than a table: which server, which action, and each
// memory's id with the version it must still be at. No words, so nothing of it outlives a
// memory forget-me erases. The field is signed with HMAC-SHA256 keyed by the session's CSRF
// secret, so a batch changed in the browser, or taken from another session, is refused.

// Kinds of batch: what a signed batch may be used for.
const (
	batchApply = "apply"
	batchUndo  = "undo"
)

// batch is a bulk action on exact memory versions.
type batch struct {
	Kind   string `json:"k"`
	Guild  string `json:"g"`
	Action string `json:"a"`
	Value  string `json:"v,omitempty"`
	// Items are [id, version] pairs.
	Items [][2]int64 `json:"i"`
}

// batchMACContext keeps a batch's MAC apart from anything else the CSRF secret might key.
const batchMACContext = "kioku web bulk batch v1\x00"

// batchMAC is the MAC of a batch's encoded payload under the session's secret.
func batchMAC(secret, payload string) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(batchMACContext))
	mac.Write([]byte(payload))
	return mac.Sum(nil)
}

// seal encodes b and signs it for the session whose CSRF secret is secret.
func (b batch) seal(secret string) string {
	raw, _ := json.Marshal(b) // a struct of strings and numbers always encodes
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + base64.RawURLEncoding.EncodeToString(batchMAC(secret, payload))
}

// openBatch returns the batch sealed in field, when its MAC is this session's (compared in
// constant time); false for anything else, tampered, truncated or another session's.
func openBatch(secret, field string) (batch, bool) {
	payload, sig, ok := strings.Cut(field, ".")
	if !ok || secret == "" {
		return batch{}, false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, batchMAC(secret, payload)) {
		return batch{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return batch{}, false
	}
	var b batch
	if err := json.Unmarshal(raw, &b); err != nil {
		return batch{}, false
	}
	return b, true
}
