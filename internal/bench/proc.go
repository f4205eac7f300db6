package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// status is the process's resident memory from /proc/self/status, in bytes.
type status struct {
	rss uint64 // VmRSS: resident now
	hwm uint64 // VmHWM: peak resident since start or the last resetPeakRSS
}

// procStatus reads VmRSS and VmHWM. It works on Linux only; elsewhere it returns an error
// and the report leaves memory at zero.
func procStatus() (status, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return status{}, fmt.Errorf("couldn't read process status: %w", err)
	}
	var st status
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseUint(string(fields[1]), 10, 64)
		if err != nil {
			continue
		}
		switch string(fields[0]) {
		case "VmRSS:":
			st.rss = kb * 1024
		case "VmHWM:":
			st.hwm = kb * 1024
		}
	}
	if st.rss == 0 {
		return status{}, errors.New("couldn't read process status: no VmRSS")
	}
	return st, nil
}

// resetPeakRSS sets VmHWM back to the current resident size (Linux's clear_refs "5"), so
// the peak of a later phase is not that of the corpus generation and load before it.
func resetPeakRSS() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("couldn't reset peak resident memory: %w", err)
	}
	return nil
}
