// Package arch holds tests of the module's shape: which packages may import
// what. It has no code of its own and must never be imported.
package arch
