package config

import (
	"os"
	"testing"
)

func BenchmarkParseFullExample(b *testing.B) {
	data, err := os.ReadFile("testdata/full.yml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseEmpty(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(nil); err != nil {
			b.Fatal(err)
		}
	}
}
