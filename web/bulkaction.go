package web

import (
	"slices"
	"strings"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// The bulk actions an editor may take on a server's memories, and what each does to one
// memory: the change it makes through the store's audited writes, and how the preview says
// it (before -> after).

// Bulk actions, as the form names them.
const (
	actForget    = "forget"
	actPin       = "pin"
	actUnpin     = "unpin"
	actSetType   = "set_type"
	actAddTag    = "add_tag"
	actRemoveTag = "remove_tag"
)

// bulkActionNames are the actions the bulk form offers.
var bulkActionNames = []string{actForget, actPin, actUnpin, actSetType, actAddTag, actRemoveTag}

// bulkAction is one action with its value (the type to set, the tag to add or remove).
type bulkAction struct{ Name, Value string }

// readAction reads and checks an action: a type must be one of memory.Types, a tag what
// /memory edit accepts as a tag. ok is false for anything else.
func readAction(name, value string) (bulkAction, bool) {
	value = strings.TrimSpace(value)
	switch name {
	case actForget, actPin, actUnpin:
		return bulkAction{Name: name}, true
	case actSetType:
		if !memory.Type(value).Valid() {
			return bulkAction{}, false
		}
		return bulkAction{Name: name, Value: value}, true
	case actAddTag, actRemoveTag:
		tags, err := memory.CleanTags([]string{value})
		if err != nil || len(tags) != 1 {
			return bulkAction{}, false
		}
		return bulkAction{Name: name, Value: tags[0]}, true
	}
	return bulkAction{}, false
}

// change is the edit the action makes to m (not for forget), and whether it changes
// anything: pinning a pinned memory, or adding a tag it has, is left out of the batch.
func (a bulkAction) change(m *memory.Memory) (memory.Change, bool) {
	ch := memory.Change{Reason: bulkReason}
	switch a.Name {
	case actForget:
		return ch, true
	case actPin, actUnpin:
		pin := a.Name == actPin
		ch.Pinned = &pin
		return ch, m.Pinned != pin
	case actSetType:
		t := memory.Type(a.Value)
		ch.Type = &t
		return ch, m.Type != t
	case actAddTag:
		if slices.Contains(m.Tags, a.Value) {
			return ch, false
		}
		tags := append(slices.Clone(m.Tags), a.Value)
		ch.Tags = &tags
		return ch, true
	case actRemoveTag:
		if !slices.Contains(m.Tags, a.Value) {
			return ch, false
		}
		tags := slices.DeleteFunc(slices.Clone(m.Tags), func(t string) bool { return t == a.Value })
		ch.Tags = &tags
		return ch, true
	}
	return ch, false
}

// bulkReason is the history reason of a bulk change made on the dashboard.
const bulkReason = "bulk action on the web dashboard"

// describe says what the action is, for the preview's heading.
func (a bulkAction) describe(l i18n.Locale) string {
	return i18n.T(l, i18n.Key("web.bulk.action."+a.Name), a.Value)
}

// beforeAfter says what the action changes on m: its pin, type or tags before and after,
// or that it is forgotten (and was pinned: an editor's forget forgets a pinned memory
// too, as /memory forget does).
func (a bulkAction) beforeAfter(l i18n.Locale, m *memory.Memory) (before, after string) {
	pinned := func(p bool) string {
		if p {
			return i18n.T(l, "web.memory.pinned")
		}
		return i18n.T(l, "web.bulk.not_pinned")
	}
	tags := func(ts []string) string {
		if len(ts) == 0 {
			return i18n.T(l, "web.bulk.no_tags")
		}
		return strings.Join(ts, ", ")
	}
	ch, _ := a.change(m)
	switch a.Name {
	case actForget:
		before = i18n.T(l, "web.bulk.live")
		if m.Pinned {
			before = i18n.T(l, "web.bulk.live_pinned")
		}
		return before, i18n.T(l, "web.bulk.forgotten")
	case actPin, actUnpin:
		return pinned(m.Pinned), pinned(*ch.Pinned)
	case actSetType:
		return string(m.Type), string(*ch.Type)
	default:
		return tags(m.Tags), tags(*ch.Tags)
	}
}
