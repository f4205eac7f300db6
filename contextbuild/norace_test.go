//go:build !race

package contextbuild_test

const raceEnabled = false
