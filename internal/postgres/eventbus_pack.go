package postgres

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"weft/db"
	"weft/internal/graph"
)

// Stream events are stored packed (migration 00026): a row of the events table holds a batch
// of events, and an event's id is its row's id * eventsPerRow + its index in the row. A row
// per event cost the checkpoint transactions that carry the batches a heap tuple and three
// index entries per event; a row per batch costs one tuple and an index entry per thread.
//
// A row's events JSON is stored compressed (migration 00027, column packed), as one zstd
// frame: it compresses five to six times, and its bytes were most of what a batch costs the
// checkpoint transaction carrying it. Rows written before keep their JSON in events.
const (
	eventsPerRow = 256
	// maxRowBytes is where a row's events JSON stops growing (an event alone may exceed it):
	// compressed, such a row is a few KB and stays in the table's page (toast_tuple_target).
	maxRowBytes = 24 << 10
	// maxRowJSON bounds what a row's packed events may decompress to: the writer never
	// makes more than maxRowBytes, or an event alone, so this only guards against a corrupt
	// row.
	maxRowJSON = 256 << 20
)

// zstdEncoder compresses rows' events; zstdDecoder reads them back. Both are safe for
// concurrent use and made on first use: SpeedFastest compresses a 7 KB row in ~16µs.
var (
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(err) // only for invalid options
		}
		return e
	})
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxRowJSON))
		if err != nil {
			panic(err) // only for invalid options
		}
		return d
	})
)

// rowOf is the row holding the event with id id.
func rowOf(id int64) int64 { return id / eventsPerRow }

// lastIDOf is the id of a row's last event.
func lastIDOf(row int64, n int32) int64 { return row*eventsPerRow + int64(n) - 1 }

// threadKeyOf is a thread's entry in a row's keys: the tenant's length in bytes, ':', the
// tenant, then the thread, which no other (tenant, thread) pair spells.
func threadKeyOf(tenant, thread string) string {
	return strconv.Itoa(len(tenant)) + ":" + tenant + thread
}

// packedRows is a batch packed into rows, as EventsInsert takes them.
type packedRows struct {
	ns      []int32
	ats     []time.Time
	tenants []string // JSON arrays
	keys    []string // JSON arrays
	packed  [][]byte // JSON arrays, zstd-compressed

	// Each event's tenant and thread, cleaned (for the batch's notification).
	eventTenants, eventThreads []string
}

// packEvents packs a batch into rows of at most eventsPerRow events and, unless one event
// alone is larger, maxRowBytes of JSON.
func packEvents(batch []pendingEvent, now time.Time) packedRows {
	var p packedRows
	var (
		buf      []byte
		n        int
		at       time.Time
		tenants  []string
		keys     []string
		seenKeys = map[threadKey]bool{}
	)
	end := func() {
		if n == 0 {
			return
		}
		buf = append(buf, ']')
		p.ns = append(p.ns, int32(n))
		p.ats = append(p.ats, at)
		ts, _ := json.Marshal(tenants)
		ks, _ := json.Marshal(keys)
		p.tenants = append(p.tenants, string(ts))
		p.keys = append(p.keys, string(ks))
		p.packed = append(p.packed, zstdEncoder().EncodeAll(buf, nil))
		buf, n, at, tenants, keys = buf[:0], 0, time.Time{}, tenants[:0], keys[:0]
		clear(seenKeys)
	}
	var one []byte
	p.eventTenants, p.eventThreads = make([]string, len(batch)), make([]string, len(batch))
	for i, e := range batch {
		tenant, thread := cleanText(e.tenant), cleanText(e.ev.Thread)
		p.eventTenants[i], p.eventThreads[i] = tenant, thread
		evAt := e.ev.At
		if evAt.IsZero() {
			evAt = now
		}
		one = appendPacked(one[:0], n, tenant, thread, e, evAt)
		if n > 0 && (n == eventsPerRow || len(buf)+1+len(one)+1 > maxRowBytes) {
			end()
			one = appendPacked(one[:0], 0, tenant, thread, e, evAt)
		}
		if n == 0 {
			buf = append(buf, '[')
		} else {
			buf = append(buf, ',')
		}
		buf = append(buf, one...)
		n++
		if evAt.After(at) {
			at = evAt
		}
		k := threadKey{tenant, thread}
		if !seenKeys[k] {
			seenKeys[k] = true
			keys = append(keys, threadKeyOf(tenant, thread))
			if !slices.Contains(tenants, tenant) {
				tenants = append(tenants, tenant)
			}
		}
	}
	end()
	return p
}

// appendPacked appends an event's JSON object in a row: {"i":…,"t":…,"h":…,"k":…,"a":…}, then
// "s" (namespace), "p" (step), "n" (node), "x" (task id) when not empty and "d" (data) when
// there is some.
func appendPacked(b []byte, i int, tenant, thread string, e pendingEvent, at time.Time) []byte {
	b = append(b, `{"i":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `,"t":`...)
	b = appendJSONString(b, tenant)
	b = append(b, `,"h":`...)
	b = appendJSONString(b, thread)
	b = append(b, `,"k":`...)
	b = appendJSONString(b, cleanText(e.ev.Kind))
	b = append(b, `,"a":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if e.ev.NS != "" {
		b = append(b, `,"s":`...)
		b = appendJSONString(b, cleanText(e.ev.NS))
	}
	if e.ev.Step != 0 {
		b = append(b, `,"p":`...)
		b = strconv.AppendInt(b, int64(e.ev.Step), 10)
	}
	if e.ev.Node != "" {
		b = append(b, `,"n":`...)
		b = appendJSONString(b, cleanText(e.ev.Node))
	}
	if e.ev.TaskID != "" {
		b = append(b, `,"x":`...)
		b = appendJSONString(b, cleanText(e.ev.TaskID))
	}
	if e.data != nil {
		b = append(b, `,"d":`...)
		b = append(b, e.data...)
	}
	return append(b, '}')
}

// appendJSONString appends s, valid UTF-8 without NUL (cleanText), as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// packedEvent is an event as a row stores it (see appendPacked).
type packedEvent struct {
	I int64           `json:"i"`
	T string          `json:"t"`
	H string          `json:"h"`
	K string          `json:"k"`
	A time.Time       `json:"a"`
	S string          `json:"s"`
	P int             `json:"p"`
	N string          `json:"n"`
	X string          `json:"x"`
	D json.RawMessage `json:"d"`
}

// unpackRow appends the events of a row that keep picks (nil: all) to out, in id order.
func unpackRow(out []StoredEvent, r db.Event, keep func(tenant, thread string, id int64) bool) ([]StoredEvent, error) {
	raw := []byte(r.Events)
	if r.Packed != nil { // since migration 00027 (events then holds '[]')
		var err error
		if raw, err = zstdDecoder().DecodeAll(r.Packed, nil); err != nil {
			return out, fmt.Errorf("decompress events of row %d: %w", r.ID, err)
		}
	}
	var evs []packedEvent
	if err := json.Unmarshal(raw, &evs); err != nil {
		return out, fmt.Errorf("read events of row %d: %w", r.ID, err)
	}
	for _, p := range evs {
		if p.I < 0 || p.I >= eventsPerRow {
			return out, fmt.Errorf("read events of row %d: index %d out of range", r.ID, p.I)
		}
		id := r.ID*eventsPerRow + p.I
		if keep != nil && !keep(p.T, p.H, id) {
			continue
		}
		e := StoredEvent{ID: id, TenantID: p.T, Event: graph.Event{
			Kind: p.K, Thread: p.H, NS: p.S, Step: p.P, Node: p.N, TaskID: p.X, At: p.A}}
		if len(p.D) > 0 {
			e.Data = p.D
		}
		out = append(out, e)
	}
	return out, nil
}
