package ltm

import "context"

// OpenTestStore opens a store on a real engine for this package's internal tests, which
// cannot import one: every engine imports this package. The external tests set it to
// sqlite.Open (engine_test.go), and both are built into one test binary.
var OpenTestStore func(ctx context.Context, path string) (*Store, error)
