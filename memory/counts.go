package memory

// MemoryCount is how many live memories of one type one scope holds, across the store
// (the operator's metrics count memories this way).
type MemoryCount struct {
	Scope Scope
	Type  Type
	Count int
}
