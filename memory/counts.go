package memory

// MemoryCount is how many live memories of one type one scope holds, across the store
// (the operator's metrics count memories this way).
type MemoryCount struct {
	Scope Scope
	Type  Type
	Count int
}

// GuildMemoryCounts are the live memories made in one guild, for /kioku status: the
// server's own memory by type, and its members' personal memories as one total (a count,
// never whose or what).
type GuildMemoryCounts struct {
	ServerByType map[Type]int
	Server       int
	Forgotten    int // server memories forgotten and still recoverable
	Personal     int
}

// Contributions are a scope's live memories counted by where they were learned and by who
// said or saved them, most first: "a channel's or a member's contributions at a glance".
type Contributions struct {
	Channels []ContributionCount
	Authors  []ContributionCount
}

// ContributionCount is how many memories one channel or one author holds. Name is a display
// name the author's memories recorded ("" for a channel).
type ContributionCount struct {
	ID, Name string
	Count    int
}
