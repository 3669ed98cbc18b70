//go:build !race

package reliability

// raceSlowdown scales MaxAck under the race detector (off here).
const raceSlowdown = 1
