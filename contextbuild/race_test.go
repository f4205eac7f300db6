//go:build race

package contextbuild_test

const raceEnabled = true
