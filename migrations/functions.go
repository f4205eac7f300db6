package migrations

import (
	"database/sql/driver"
	"fmt"

	"modernc.org/sqlite"

	"github.com/kioku-bot/kioku/memory"
)

// The schema's triggers call kioku_search_text (migration 0004), so it is registered with
// the driver whenever the schema can be used: every connection this process opens has it.
// A tool that opens the database without it can read, but writing a memory fails with
// "no such function" instead of leaving the word index out of step.
func init() {
	if err := sqlite.RegisterDeterministicScalarFunction("kioku_search_text", 1, searchText); err != nil {
		panic(fmt.Sprintf("couldn't register kioku_search_text: %v", err))
	}
}

// searchText is memory.SearchText for SQL; NULL stays NULL.
func searchText(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case nil:
		return nil, nil
	case string:
		return memory.SearchText(v), nil
	case []byte:
		return memory.SearchText(string(v)), nil
	default:
		return nil, fmt.Errorf("kioku_search_text: want text, got %T", v)
	}
}
