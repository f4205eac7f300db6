package pgstore

// SetCJKScanMax lowers the scope size above which CJK search is narrowed by trigrams, so a
// test reaches that path without 20,000 memories.
func (s *Store) SetCJKScanMax(n int) { s.db.cjkScanMax = n }

// TrigramsCJK reports whether the database's pg_trgm indexes CJK characters.
func (s *Store) TrigramsCJK() bool { return s.db.trigramsCJK }
