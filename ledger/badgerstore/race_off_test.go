//go:build !race

package badgerstore

const raceOn = false
