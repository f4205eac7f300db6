package ltm

import (
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// bulkAnalysis is the work a bulk write does on each memory's text alone, before storing it:
// marking decisions (graph.ProtectDecision) and finding the entities it names (graph.Link).
// It needs no database, so it runs on another core ahead of the write transactions: while
// one batch is written, the next is analysed. At 100k memories it was about a tenth of a
// bulk write, done inside the transaction.
type bulkAnalysis struct {
	mems     []memory.Memory
	ents     [][]graph.Entity // by index in mems
	done     []chan struct{}  // done[c] is closed when chunk c is analysed
	stop     chan struct{}
	finished chan struct{} // closed when run returns
}

// bulkAnalysisChunk is how many memories are analysed between two hand-overs; a bulk write
// batch of RememberMany (rememberManyBatch) is two chunks.
const bulkAnalysisChunk = 500

// analyseBulk starts analysing mems in order. Until close, the caller reads a memory only
// once wait has covered it (ProtectDecision may change its type and importance).
func analyseBulk(mems []memory.Memory) *bulkAnalysis {
	n := (len(mems) + bulkAnalysisChunk - 1) / bulkAnalysisChunk
	a := &bulkAnalysis{mems: mems, ents: make([][]graph.Entity, len(mems)), done: make([]chan struct{}, n),
		stop: make(chan struct{}), finished: make(chan struct{})}
	for c := range a.done {
		a.done[c] = make(chan struct{})
	}
	go a.run()
	return a
}

func (a *bulkAnalysis) run() {
	defer close(a.finished)
	for c := range a.done {
		select {
		case <-a.stop:
			return // the write failed: no one waits any more
		default:
		}
		for i := c * bulkAnalysisChunk; i < min((c+1)*bulkAnalysisChunk, len(a.mems)); i++ {
			m := &a.mems[i]
			graph.ProtectDecision(m)
			a.ents[i] = graph.Link(m.Content, linkContext(m))
		}
		close(a.done[c])
	}
}

// wait returns once memories [lo, hi) are analysed.
func (a *bulkAnalysis) wait(lo, hi int) {
	if hi <= lo {
		return
	}
	for c := lo / bulkAnalysisChunk; c <= (hi-1)/bulkAnalysisChunk; c++ {
		<-a.done[c]
	}
}

// close stops the analysis of chunks no one has waited for yet and returns once it has
// stopped, so the caller owns mems again (a failed write returns to its caller at once).
func (a *bulkAnalysis) close() {
	close(a.stop)
	<-a.finished
}
