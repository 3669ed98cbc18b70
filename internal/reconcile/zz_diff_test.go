package reconcile

import (
	"fmt"
	"reflect"
	"sort"
)

func diffPaths(a, b any, path string, out *[]string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok { *out = append(*out, path); return }
		keys := map[string]bool{}
		for k := range x { keys[k] = true }
		for k := range y { keys[k] = true }
		var ks []string
		for k := range keys { ks = append(ks, k) }
		sort.Strings(ks)
		for _, k := range ks { diffPaths(x[k], y[k], path+"."+k, out) }
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) { *out = append(*out, fmt.Sprintf("%s (len %d vs %v)", path, len(x), b)); return }
		for i := range x { diffPaths(x[i], y[i], fmt.Sprintf("%s[%d]", path, i), out) }
	default:
		if !reflect.DeepEqual(a, b) { *out = append(*out, fmt.Sprintf("%s: %v vs %v", path, a, b)) }
	}
}
