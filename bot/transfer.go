package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// memoryExport sends the live memories of a scope as a JSON attachment in
// the format /memory import and `kioku memories import` read. Exporting a
// server's memory is an editor's task (it is a copy of everything the
// server taught the bot); personal memory can always be exported by its
// owner, at every privacy level. Like every view, it holds only memories from channels the
// caller can read.
func (b memoryTransfer) memoryExport(ctx context.Context, c *call) (*response, error) {
	owner, err := c.owner()
	if err != nil {
		return nil, err
	}
	if err := b.perms.requireWrite(ctx, c, owner); err != nil {
		return nil, err
	}
	f, err := b.store.Transfer.ExportWithin(ctx, owner, c.audience(ctx))
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("couldn't encode export: %w", err)
	}
	name := "kioku-personal-memories.json"
	if owner.Scope == memory.ScopeServer {
		name = "kioku-server-" + owner.GuildID + "-memories.json"
	}
	c.log.Info("memories exported", "scope", owner.Scope, "count", len(f.Memories))
	return &response{
		content: i18n.N(c.locale(), "transfer.exported", len(f.Memories), describeIn(c.locale(), owner)),
		files:   []*discordgo.File{{Name: name, ContentType: "application/json", Reader: bytes.NewReader(data)}},
	}, nil
}

// memoryImport adds the memories of an attached export file to a scope. The
// file is size-checked before it is downloaded and again while reading,
// validated whole, and written in one transaction: either every memory
// lands or none does.
func (b memoryTransfer) memoryImport(ctx context.Context, c *call) (*response, error) {
	owner, err := c.owner()
	if err != nil {
		return nil, err
	}
	if err := b.perms.checkWrite(ctx, c, owner); err != nil {
		return nil, err
	}
	att := c.attachment("file")
	if att == nil {
		return nil, errT(memory.EINVALID, "transfer.error.no_file")
	}
	if int64(att.Size) > b.maxImportBytes {
		return nil, errT(memory.EINVALID, "transfer.error.too_big", memory.ByteSize(int64(att.Size)), memory.ByteSize(b.maxImportBytes))
	}
	data, err := b.download(ctx, att.URL)
	if err != nil {
		return nil, err
	}
	f, err := memory.ParseExport(data)
	if err != nil {
		return nil, err
	}
	if len(f.Memories) == 0 {
		return nil, errT(memory.EINVALID, "transfer.error.empty")
	}
	// The importer is the author; what the file claims about authors, channels and
	// messages is not taken as provenance (ltm.Transfer.ImportAs).
	res, err := b.store.Transfer.ImportAs(ctx, owner, f, memory.Importer{Actor: memory.UserActor(c.userID()),
		AuthorID: c.userID(), AuthorName: c.userName(), GuildID: c.guildID(), ChannelID: c.i.ChannelID, MessageID: c.i.ID,
		Audience: c.audience(ctx)})
	if err != nil {
		return nil, err
	}
	c.log.Info("memories imported", "scope", owner.Scope, "created", res.Created, "duplicates", res.Duplicates)
	l := c.locale()
	msg := i18n.N(l, "transfer.imported", res.Created, describeIn(l, owner))
	if res.Similar > 0 {
		msg += " " + i18n.N(l, "transfer.similar", res.Similar)
	}
	if res.Duplicates > 0 {
		msg += " " + i18n.N(l, "transfer.duplicates", res.Duplicates)
	}
	return &response{content: msg}, nil
}

// attachment returns the resolved attachment of an attachment option.
func (c *call) attachment(name string) *discordgo.MessageAttachment {
	id := c.options.str(name)
	if id == "" || c.command.Resolved == nil {
		return nil
	}
	return c.command.Resolved.Attachments[id]
}

// download fetches an attachment, refusing more than maxImportBytes even
// when the declared size was wrong.
func (b memoryTransfer) download(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, errT(memory.EINVALID, "transfer.error.address")
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("couldn't download attachment: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("couldn't download attachment: HTTP %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, b.maxImportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("couldn't download attachment: %w", err)
	}
	if int64(len(data)) > b.maxImportBytes {
		return nil, errT(memory.EINVALID, "transfer.error.larger", memory.ByteSize(b.maxImportBytes))
	}
	return data, nil
}
