package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// memGraph is `kioku memories graph`: the most mentioned entities of a scope's knowledge
// graph, or with --entity one entity's neighbourhood (its aliases, relations, the live
// memories that mention it and the entities mentioned with it). Only the scope named by
// --guild or --user is read.
func memGraph(ctx context.Context, app *App, store *backend, args []string) error {
	fs := newFlagSet(app, "memories graph")
	var sf scopeFlags
	sf.register(fs)
	entity := fs.String("entity", "", "show this entity's neighbourhood (any of its names)")
	limit := fs.Int("limit", 20, "how many entities to list without --entity")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (give the entity's name with --entity)", pos[0])
	}
	owner, err := sf.owner()
	if err != nil {
		return err
	}
	if *entity == "" {
		top, err := store.Graph.TopEntities(ctx, owner, *limit)
		if err != nil {
			return err
		}
		if sf.asJSON {
			return writeJSON(app.Stdout, map[string]any{"entities": nonNil(top)})
		}
		if len(top) == 0 {
			fmt.Fprintf(app.Stdout, "No entities in %s yet.\n", scopeArgs(owner))
			return nil
		}
		tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ENTITY\tKIND\tMENTIONS\tMEMBER")
		for _, n := range top {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", oneLine(n.Name), n.Kind, n.Mentions, n.UserID)
		}
		return tw.Flush()
	}
	nb, err := store.Graph.Neighbourhood(ctx, owner, *entity)
	if err != nil {
		return err
	}
	// The operator reads the whole scope: no audience narrows the co-mentions (nil), as
	// none narrows the rest of the neighbourhood.
	with, err := store.Graph.MentionedWith(ctx, memory.Visible{Owner: owner}, nb.Entity.ID, nil, cliMentionedWith)
	if err != nil {
		return err
	}
	if sf.asJSON {
		nb.Aliases, nb.Relations, nb.Memories = nonNil(nb.Aliases), nonNil(nb.Relations), nonNil(nb.Memories)
		return writeJSON(app.Stdout, struct {
			graph.Neighbourhood
			MentionedWith []graph.CoMention `json:"mentioned_with"`
		}{nb, nonNil(with)})
	}
	printNeighbourhood(app, nb, with)
	return nil
}

// cliMentionedWith is how many co-mentioned entities the entity view lists.
const cliMentionedWith = 10

func printNeighbourhood(app *App, nb graph.Neighbourhood, with []graph.CoMention) {
	w := app.Stdout
	head := fmt.Sprintf("%s (%s", nb.Entity.Name, nb.Entity.Kind)
	if nb.Entity.UserID != "" {
		head += ", member " + nb.Entity.UserID
	}
	fmt.Fprintf(w, "%s), %d mentions\n", head, nb.Entity.Mentions)
	fmt.Fprintf(w, "aliases: %s\n", strings.Join(nb.Aliases, ", "))
	if len(nb.Relations) == 0 {
		fmt.Fprintln(w, "relations: none")
	} else {
		fmt.Fprintln(w, "relations:")
		for _, r := range nb.Relations {
			fmt.Fprintf(w, "  %s —%s→ %s (%s)  ×%d, confidence %.2f\n", r.Source.Name, r.Type, r.Target.Name,
				otherKind(nb.Entity, r), r.Mentions, r.Confidence)
		}
	}
	ids := make([]string, len(nb.Memories))
	for i, id := range nb.Memories {
		ids[i] = "#" + strconv.FormatInt(id, 10)
	}
	if len(ids) == 0 {
		ids = []string{"none"}
	}
	fmt.Fprintf(w, "memories: %s\n", strings.Join(ids, " "))
	if len(with) == 0 {
		fmt.Fprintln(w, "mentioned with: none")
		return
	}
	fmt.Fprintln(w, "mentioned with:")
	for _, c := range with {
		fmt.Fprintf(w, "  %s (%s)  ×%d\n", oneLine(c.Node.Name), c.Node.Kind, c.Count)
	}
}

// otherKind is the kind of the relation's end that is not the entity shown.
func otherKind(e graph.Node, r graph.Edge) graph.Kind {
	if r.Source.ID == e.ID {
		return r.Target.Kind
	}
	return r.Source.Kind
}
