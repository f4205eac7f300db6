package web

import (
	"math"
	"strconv"
)

// The graph page's drawing: the entity in the middle and what surrounds it on a circle
// around it, in a fixed order (entities mentioned with it, most shared first, then the
// memories that mention it, newest first), so the same graph always draws the same. Only
// presentation attributes are used: the content security policy allows no inline style.

// Size of the drawing, in SVG user units.
const (
	drawWidth  = 640
	drawHeight = 480
	drawRadius = 180
)

// drawing is what the template draws: the centre, the nodes around it and an edge from the
// centre to each.
type drawing struct {
	Width, Height int
	Centre        drawNode
	Nodes         []drawNode
}

// drawNode is one node: where it is, what it says, where it links, and whether it is a
// memory (drawn square) or an entity (drawn round).
type drawNode struct {
	X, Y int
	// LabelY is where its label sits (below the node).
	LabelY int
	Label  string
	// Title is the node's tooltip: an entity's full name, a memory's words.
	Title, Link string
	Memory      bool
	// Edge is the edge's label (the count of shared memories); EdgeX, EdgeY its place.
	Edge         string
	EdgeX, EdgeY int
}

// draw lays out body's neighbourhood.
func draw(body *graphBody) drawing {
	cx, cy := drawWidth/2, drawHeight/2
	d := drawing{Width: drawWidth, Height: drawHeight,
		Centre: drawNode{X: cx, Y: cy, LabelY: cy + 34, Label: label(body.Entity), Title: body.Entity, Link: body.entityLink(body.Entity)}}
	var around []drawNode
	for _, n := range body.With {
		around = append(around, drawNode{Label: label(n.Name), Title: n.Name, Link: n.Link, Edge: strconv.Itoa(n.Count)})
	}
	for _, m := range body.Memories {
		around = append(around, drawNode{Label: "#" + strconv.FormatInt(m.ID, 10), Title: m.Content, Link: m.Link, Memory: true})
	}
	for i := range around {
		// Evenly round the circle, starting at the top, clockwise.
		angle := -math.Pi/2 + 2*math.Pi*float64(i)/float64(len(around))
		x := cx + int(math.Round(drawRadius*math.Cos(angle)))
		y := cy + int(math.Round(drawRadius*0.9*math.Sin(angle)))
		around[i].X, around[i].Y, around[i].LabelY = x, y, y+28
		around[i].EdgeX, around[i].EdgeY = (cx+x)/2, (cy+y)/2
	}
	d.Nodes = around
	return d
}

// itoa is strconv.Itoa, short for the views that join numbers into words.
func itoa(n int) string { return strconv.Itoa(n) }
