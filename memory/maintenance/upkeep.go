package maintenance

// ReindexReport says what the store's Reindex did (`kioku reindex`).
type ReindexReport struct {
	// Memories counts the rows read, forgotten ones included.
	Memories int `json:"memories"`
	// SearchText counts the rows whose stored search text was missing or out of date.
	SearchText int `json:"search_text"`
	// Words and Trigrams count the live memories now in the word and trigram indexes (the
	// trigram index holds those with text beyond ASCII).
	Words    int `json:"words"`
	Trigrams int `json:"trigrams"`
}

// RepairReport says what one run of the store's upgrade repairs (RunRepairs) did.
type RepairReport struct {
	// Finished lists the repairs completed by this run.
	Finished []string `json:"finished,omitempty"`
	// Memories counts memories whose content had a credential redacted; Duplicates those
	// of them forgotten because their redacted text was already remembered in the scope.
	Memories   int `json:"memories"`
	Duplicates int `json:"duplicates"`
	// History, Transcripts and Jobs count rows with a credential redacted.
	History     int `json:"history"`
	Transcripts int `json:"transcripts"`
	Jobs        int `json:"jobs"`
	// Stripped counts finished jobs reduced to their ids.
	Stripped int `json:"stripped"`
	// SearchText counts memories given their stored search text.
	SearchText int `json:"search_text"`
	// Linked counts memories linked to the entities they mention.
	Linked int `json:"linked"`
	// RefersTo counts memories given the span of time their words name (refers_to).
	RefersTo int `json:"refers_to"`
	// Comentions counts memories whose words were counted in their scope's word company.
	Comentions int `json:"comentions"`
	// Vacuumed is true when the database file was rebuilt without its freed pages.
	Vacuumed bool `json:"vacuumed"`
}

// Empty reports whether the run had nothing to do.
func (r RepairReport) Empty() bool {
	return len(r.Finished) == 0 && r.Memories+r.History+r.Transcripts+r.Jobs+r.Stripped+r.SearchText+r.Linked+r.RefersTo+r.Comentions == 0 && !r.Vacuumed
}

// WordCompanyReport is what a check of the word-company counts found (ltm's
// CheckWordCompany): how many live memories are counted, how many pairs the counts hold,
// and how many pairs or memory records differ from a count made afresh from the live
// memories. Drift is 0 in a healthy store.
type WordCompanyReport struct {
	Memories int `json:"memories"`
	Pairs    int `json:"pairs"`
	Drift    int `json:"drift"`
}
