package kwindex

import (
	"strings"

	"github.com/kioku-bot/kioku/internal/vecindex"
)

// A scope's memories share a handful of origin guilds, channels, types, authors, importance
// values and tag sets, so the index keeps each distinct combination once (a profile) and
// per memory only its creation time and the profile's number: 12 bytes instead of the
// 100-odd of a vecindex.Meta.

// profile is vecindex.Meta without CreatedAt.
type profile struct {
	guild, channel, typ, authorID, state string
	pinned                               bool
	importance                           float64
	tags                                 []string
}

// profileKey identifies a profile; tags are joined by NUL, which no tag holds.
type profileKey struct {
	guild, channel, typ, authorID, state string
	pinned                               bool
	importance                           float64
	tags                                 string
}

// profiles interns a scope's profiles. A profile no live memory uses is dropped at once
// (tags can be words a member would have forgotten), and its number reused.
type profiles struct {
	list []profile
	refs []int32
	ids  map[profileKey]uint32
	free []uint32
}

func keyOf(m *vecindex.Meta) profileKey {
	return profileKey{guild: m.OriginGuild, channel: m.Channel, typ: m.Type, authorID: m.AuthorID, state: m.State,
		pinned: m.Pinned, importance: m.Importance, tags: strings.Join(m.Tags, "\x00")}
}

func (p *profiles) intern(m *vecindex.Meta) uint32 {
	k := keyOf(m)
	if id, ok := p.ids[k]; ok {
		p.refs[id]++
		return id
	}
	if p.ids == nil {
		p.ids = map[profileKey]uint32{}
	}
	pr := profile{guild: k.guild, channel: k.channel, typ: k.typ, authorID: k.authorID, state: k.state, pinned: k.pinned,
		importance: k.importance, tags: append([]string(nil), m.Tags...)}
	var id uint32
	if n := len(p.free); n > 0 {
		id = p.free[n-1]
		p.free = p.free[:n-1]
		p.list[id], p.refs[id] = pr, 1
	} else {
		id = uint32(len(p.list))
		p.list = append(p.list, pr)
		p.refs = append(p.refs, 1)
	}
	p.ids[k] = id
	return id
}

// release drops one memory's use of profile id.
func (p *profiles) release(id uint32) {
	if p.refs[id]--; p.refs[id] > 0 {
		return
	}
	pr := &p.list[id]
	delete(p.ids, profileKey{guild: pr.guild, channel: pr.channel, typ: pr.typ, authorID: pr.authorID, state: pr.state,
		pinned: pr.pinned, importance: pr.importance, tags: strings.Join(pr.tags, "\x00")})
	*pr = profile{}
	p.free = append(p.free, id)
}

// meta rebuilds the metadata a filter checks; it allocates nothing (the strings and tags are
// the profile's).
func (p *profiles) meta(id uint32, createdAt int64) vecindex.Meta {
	pr := &p.list[id]
	return vecindex.Meta{OriginGuild: pr.guild, Channel: pr.channel, CreatedAt: createdAt, Type: pr.typ,
		Pinned: pr.pinned, Importance: pr.importance, Tags: pr.tags, AuthorID: pr.authorID, State: pr.state}
}
