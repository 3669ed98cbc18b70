package transcript

import (
	"fmt"
	"strings"
)

// maxCells bounds the comparison table of Diff; past it the differing
// middle is shown as removed then added.
const maxCells = 4 << 20

// Diff returns a line diff of want and got: "-" lines only in want, "+"
// lines only in got, two lines of context, hunks headed by their line
// numbers ("@@ -want +got @@"). It returns "" when they are equal.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	ops := lineOps(a, b)
	var out strings.Builder
	const ctx = 2
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		// Extend the hunk over changes closer than 2*ctx lines apart.
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*ctx {
				break
			}
		}
		end = min(end+ctx, len(ops)-1)
		fmt.Fprintf(&out, "@@ -%d +%d @@\n", ops[start].a+1, ops[start].b+1)
		for _, o := range ops[start : end+1] {
			out.WriteString(string(o.kind) + o.text + "\n")
		}
		i = end + 1
	}
	return out.String()
}

// op is one line of a diff; a and b are its 0-based lines in want and got
// (for a line of one side only, where the other side stands).
type op struct {
	kind byte // ' ', '-', '+'
	text string
	a, b int
}

// lineOps aligns a and b on a longest common subsequence of lines, after
// taking off their common prefix and suffix.
func lineOps(a, b []string) []op {
	var ops []op
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		ops = append(ops, op{' ', a[p], p, p})
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	ops = append(ops, middle(ma, mb, p)...)
	for k := 0; k < s; k++ {
		i, j := len(a)-s+k, len(b)-s+k
		ops = append(ops, op{' ', a[i], i, j})
	}
	return ops
}

// middle diffs the differing middle parts, which start at line off.
func middle(a, b []string, off int) []op {
	var ops []op
	if (len(a)+1)*(len(b)+1) > maxCells {
		for i, l := range a {
			ops = append(ops, op{'-', l, off + i, off})
		}
		for j, l := range b {
			ops = append(ops, op{'+', l, off + len(a), off + j})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i], off + i, off + j})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i], off + i, off + j})
			i++
		default:
			ops = append(ops, op{'+', b[j], off + i, off + j})
			j++
		}
	}
	return ops
}
