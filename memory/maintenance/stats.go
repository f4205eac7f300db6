package maintenance

// Stats summarises what the store holds, for `kioku doctor` and `/kioku status`.
type Stats struct {
	Memories     int            `json:"memories"`
	Forgotten    int            `json:"forgotten"`
	Embeddings   int            `json:"embeddings"`
	HistoryRows  int            `json:"history_rows"`
	Turns        int            `json:"transcript_turns"`
	Jobs         map[string]int `json:"jobs"` // by state: queued, leased, done, dead
	DBBytes      int64          `json:"db_bytes"`
	Migrations   int            `json:"migrations"`
	IntegrityOK  bool           `json:"integrity_ok"`
	IntegrityErr string         `json:"integrity_error,omitempty"`
}
