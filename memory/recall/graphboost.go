package recall

// GraphLink says how a candidate is tied to the entities a query names in the knowledge
// graph.
type GraphLink uint8

// The ways a candidate can be linked to a query's entities.
const (
	// GraphNone: the candidate mentions none of the query's entities or their neighbours.
	GraphNone GraphLink = iota
	// GraphHop: the candidate mentions an entity one relation away from a query entity.
	GraphHop
	// GraphDirect: the candidate mentions an entity the query names.
	GraphDirect
)

// graphFloorShare is the relevance, as a share of the graph boost, of a candidate only the
// graph found (no leg scored it): low enough that any real keyword match outranks it.
const graphFloorShare = 0.05

// GraphWeight is how much of the graph boost a link earns: 1 for a query entity, hop
// (Stages.GraphHop) for a one-hop neighbour, 0 otherwise.
func GraphWeight(link GraphLink, hop float64) float64 {
	switch link {
	case GraphDirect:
		return 1
	case GraphHop:
		return hop
	}
	return 0
}

// graphBoost applies the graph stage to a candidate's blended relevance:
//
//	rel ×= 1 + GraphBoost·w            w = GraphWeight(link, GraphHop)
//	rel  = 0.05·GraphBoost·w           when no leg scored it (rel is 0): found by the graph only
//
// so a linked match rises above an equal unlinked one, and a memory only the graph found
// ranks below every memory a leg matched.
func graphBoost(rel float64, link GraphLink, st Stages) float64 {
	if st.GraphBoost <= 0 {
		return rel
	}
	w := GraphWeight(link, st.GraphHop)
	if w <= 0 {
		return rel
	}
	if rel <= 0 {
		return graphFloorShare * st.GraphBoost * w
	}
	return rel * (1 + st.GraphBoost*w)
}
