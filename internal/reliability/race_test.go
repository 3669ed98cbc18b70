//go:build race

package reliability

// raceSlowdown scales MaxAck under the race detector.
const raceSlowdown = 2
