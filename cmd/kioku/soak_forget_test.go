//go:build soak

package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// forgetMe is a forget-me by c's member before turn k, in the middle of the load. With
// cross-server use on, a search through their shard's process finds the memories saved for
// them since their last forget-me; they erase everything through one process (shard 0's
// and the others' in turn); then a search through every process finds none of them, and
// the model checks that no prompt of a turn sent afterwards, in any process, holds their
// earlier words. A step a fault refuses is asked again, as a member would.
func (s *soak) forgetMe(c *soakConv, k int) {
	s.mu.Lock()
	via := s.forgetMes % s.shards
	s.forgetMes++
	s.mu.Unlock()
	mine := fmt.Sprintf("topic %d-", c.id)
	if !s.step("privacy cross_server", func() bool {
		text, _, ok := s.command(c, 0, slash("privacy", "", &discordgo.ApplicationCommandInteractionDataOption{
			Name: "cross_server", Type: discordgo.ApplicationCommandOptionBoolean, Value: true}))
		return ok && strings.Contains(text, "Level:")
	}) {
		return
	}
	expect := c.savedSinceForget(k)
	for shard := range s.shards {
		text, ok := s.search(c, shard)
		// A process knows the channels of its own shards' servers only (README, "Scaling
		// out"): another shard's shows none of the memories learned in this one's servers.
		if ok && expect && shard == c.place.shard && !strings.Contains(text, mine) {
			s.fail(fmt.Sprintf("before a forget-me, a search through shard %d found none of the member's saved memories", shard))
			s.t.Logf("member %d's search through shard %d before their forget-me: %q", c.id, shard, text)
		}
	}
	if !s.step("forget-me", func() bool {
		_, buttons, ok := s.command(c, via, slash("memory", "forget-me"))
		confirm := ""
		for _, b := range buttons {
			if strings.HasPrefix(b, idForgetMeConfirmPrefix) {
				confirm = b
			}
		}
		if !ok || confirm == "" {
			return false
		}
		place := s.commandPlace(c, via)
		perms := int64(0)
		if place.guild != "" {
			perms = permMember
		}
		text, _, ok := s.interact(s.fake.ComponentClick(place.guild, place.channel, c.user, perms, confirm, nil))
		return ok && strings.HasPrefix(text, "Done.")
	}) {
		return
	}
	c.addForget(k, time.Now())
	for shard := range s.shards {
		if text, ok := s.search(c, shard); ok && strings.Contains(text, mine) {
			s.fail(fmt.Sprintf("after a forget-me through shard %d, a search through shard %d still finds the member's memories", via, shard))
			s.t.Logf("member %d's search through shard %d after their forget-me: %q", c.id, shard, text)
		}
	}
}

// idForgetMeConfirmPrefix starts the custom ID of forget-me's confirm button.
const idForgetMeConfirmPrefix = "forgetme:confirm:"

// search is the member's /memory search for their own facts through shard's process.
func (s *soak) search(c *soakConv, shard int) (text string, ok bool) {
	ok = s.step("search", func() bool {
		var answered bool
		text, _, answered = s.command(c, shard, slash("memory", "search",
			strOpt("query", fmt.Sprintf("Soak member %d likes topic", c.id)), strOpt("scope", "personal")))
		return answered && (strings.Contains(text, "matching") || strings.Contains(text, "Nothing in"))
	})
	return text, ok
}

// commandPlace is where c's member runs a command through shard's process: their DM for
// shard 0, the probe's guild channel for the others.
func (s *soak) commandPlace(c *soakConv, shard int) soakPlace {
	if shard == 0 {
		return soakPlace{channel: c.dm}
	}
	return s.probes[shard].place
}

// command runs a slash command of c's member through shard's process.
func (s *soak) command(c *soakConv, shard int, data discordgo.ApplicationCommandInteractionData) (string, []string, bool) {
	place := s.commandPlace(c, shard)
	perms := int64(0)
	if place.guild != "" {
		perms = permMember
	}
	return s.interact(s.fake.SlashCommand(place.guild, place.channel, c.user, perms, data))
}

// step runs do until it reports a proper answer, waiting between tries: a fault may refuse
// a command or leave it unanswered. It fails the run when no try succeeds.
func (s *soak) step(what string, do func() bool) bool {
	for try := 1; ; try++ {
		if do() {
			return true
		}
		if try == soakStepTries {
			s.fail(fmt.Sprintf("forget-me: %s never got a proper answer", what))
			return false
		}
		select {
		case <-s.stop:
			return false
		case <-time.After(soakRetryWait):
		}
	}
}
