package storecopy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// valueKind is how a column's values are carried: the target's type decides, and the
// source's values are converted to it, so both sides hash the same values the same way.
type valueKind int

const (
	kindInt valueKind = iota
	kindFloat
	kindText
	kindBytes
)

// kindOf maps a PostgreSQL data type (information_schema's spelling) to a valueKind.
func kindOf(dataType string) (valueKind, error) {
	switch dataType {
	case "bigint", "integer", "smallint":
		return kindInt, nil
	case "double precision", "real":
		return kindFloat, nil
	case "text", "character varying", "character":
		return kindText, nil
	case "bytea":
		return kindBytes, nil
	}
	return 0, fmt.Errorf("the copy does not know the column type %q", dataType)
}

// convert turns a value read from either database into the Go type of kind; nil stays nil
// (SQL NULL).
func convert(v any, kind valueKind) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch kind {
	case kindInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int32:
			return int64(x), nil
		case int16:
			return int64(x), nil
		case float64:
			if x == math.Trunc(x) {
				return int64(x), nil
			}
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n, nil
			}
		}
	case kindFloat:
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		case int64:
			return float64(x), nil
		case int32:
			return float64(x), nil
		}
	case kindText:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case kindBytes:
		switch x := v.(type) {
		case []byte:
			return append([]byte(nil), x...), nil
		case string:
			return []byte(x), nil
		}
	}
	return nil, fmt.Errorf("can't carry %T value %v as %s", v, v, kindName(kind))
}

func kindName(k valueKind) string {
	return [...]string{"an integer", "a number", "text", "bytes"}[k]
}

// tableHash is a table's row count and an order-free hash of its rows: each row is hashed
// on its own, and the sorted row hashes are hashed together, so the two databases may
// return rows in different orders (their text collations differ).
type tableHash struct {
	rows int64
	sums [][sha256.Size]byte
}

// add hashes one row of converted values: each value typed and length-prefixed, so that
// ("ab", "c") and ("a", "bc") differ, and NULL differs from "".
func (h *tableHash) add(vals []any) {
	d := sha256.New()
	var buf [8]byte
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			d.Write([]byte{0})
		case int64:
			d.Write([]byte{1})
			binary.BigEndian.PutUint64(buf[:], uint64(x))
			d.Write(buf[:])
		case float64:
			d.Write([]byte{2})
			binary.BigEndian.PutUint64(buf[:], math.Float64bits(x))
			d.Write(buf[:])
		case string:
			d.Write([]byte{3})
			binary.BigEndian.PutUint64(buf[:], uint64(len(x)))
			d.Write(buf[:])
			d.Write([]byte(x))
		case []byte:
			d.Write([]byte{4})
			binary.BigEndian.PutUint64(buf[:], uint64(len(x)))
			d.Write(buf[:])
			d.Write(x)
		}
	}
	var sum [sha256.Size]byte
	copy(sum[:], d.Sum(nil))
	h.sums = append(h.sums, sum)
	h.rows++
}

// digest is the table's hash.
func (h tableHash) digest() [sha256.Size]byte {
	sort.Slice(h.sums, func(i, j int) bool { return string(h.sums[i][:]) < string(h.sums[j][:]) })
	d := sha256.New()
	for _, s := range h.sums {
		d.Write(s[:])
	}
	var out [sha256.Size]byte
	copy(out[:], d.Sum(nil))
	return out
}

// summary is a table's row count and hash, as the two sides compare them.
type summary struct {
	rows int64
	hash string
}

func (h tableHash) summary() summary {
	d := h.digest()
	return summary{rows: h.rows, hash: hex.EncodeToString(d[:])}
}
