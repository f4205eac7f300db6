package tools

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"github.com/sashabaranov/go-openai/jsonschema"
)

// TestSchemasAreOnlyReadToMarshal: a tool's schema is built once and sent by every turn,
// concurrently. go-openai's Definition.MarshalJSON fills in a missing Properties map as it
// marshals, so every definition of a fresh schema has one already: marshals at once then
// only read the schema, and each sends the same JSON.
func TestSchemasAreOnlyReadToMarshal(t *testing.T) {
	for _, v := range []any{CreateArgs{}, UpdateArgs{}, STMArgs{}, SearchArgs{}} {
		def := mustSchema(v)
		var walk func(path string, d *jsonschema.Definition)
		walk = func(path string, d *jsonschema.Definition) {
			if d.Properties == nil {
				t.Errorf("%T: the definition at %q has no Properties map for a marshal to fill in", v, path)
			}
			for k, p := range d.Properties {
				walk(path+"/"+k, &p)
			}
			if d.Items != nil {
				walk(path+"/items", d.Items)
			}
		}
		walk("", def)
		want, err := json.Marshal(def)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if got, err := json.Marshal(def); err != nil || !bytes.Equal(got, want) {
					t.Errorf("%T: concurrent marshal = %s, %v; want %s", v, got, err, want)
				}
			})
		}
		wg.Wait()
	}
}
