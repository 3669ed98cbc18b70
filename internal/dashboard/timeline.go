package dashboard

import (
	"time"
	"unicode/utf8"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
)

// timelineSVG is the laid-out timeline picture: one dot per item, evenly
// spaced in time order along one axis, labels alternating above and below
// so neighbours do not overlap. Only numbers and escaped text reach the
// SVG.
type timelineSVG struct {
	Width, Height int
	X0, X1, Axis  int
	Items         []svgItem
}

type svgItem struct {
	X, LabelY, DateY int
	StemY            int // where the stem from the dot to the label ends
	Color            string
	Short, Title     string
	When             string
	Link             string
}

// itemColors colours a dot by its kind (a fixed table: no input reaches
// an attribute other than a number, a link, or one of these).
var itemColors = map[model.ItemKind]string{
	model.ItemStep: "#1a7f37", model.ItemWait: "#bf8700", model.ItemDecision: "#0969da",
	model.ItemRetry: "#cf222e", model.ItemReview: "#8250df", model.ItemStop: "#57606a", model.ItemArchive: "#8c959f",
}

const (
	svgStep   = 120
	svgMargin = 70
	svgMaxLen = 22
)

func layout(items []model.Item) timelineSVG {
	if len(items) == 0 {
		return timelineSVG{}
	}
	s := timelineSVG{Height: 130, Axis: 65, X0: svgMargin - 20}
	for i, it := range items {
		x := svgMargin + i*svgStep
		up := i%2 == 0
		v := svgItem{X: x, Color: itemColors[it.Kind], Short: short(it.Label), Title: string(it.Kind) + ": " + it.Label, When: when(it.At), Link: it.Link}
		if v.Color == "" {
			v.Color = "#8c959f"
		}
		if up {
			v.LabelY, v.DateY, v.StemY = 30, 16, 34
		} else {
			v.LabelY, v.DateY, v.StemY = 100, 114, 88
		}
		s.Items = append(s.Items, v)
	}
	s.X1 = svgMargin + (len(items)-1)*svgStep + 20
	s.Width = s.X1 + svgMargin
	return s
}

// short cuts a label to fit its slot, on a rune boundary.
func short(s string) string {
	if utf8.RuneCountInString(s) <= svgMaxLen {
		return s
	}
	r := []rune(s)
	return string(r[:svgMaxLen-1]) + "…"
}

func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("Jan 2 15:04")
}
