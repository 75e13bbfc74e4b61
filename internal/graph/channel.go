package graph

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Reducer folds the updates a channel received in one step into its value.
// Built-ins: LastValue (the default), Append and Merge; ReducerFunc makes a
// custom one. Declare a built-in with a struct tag on the state field,
// `weft:"append"` or `weft:"merge"`, and a custom one with Builder.Reducer.
type Reducer interface {
	reduce(ch *channel, cur reflect.Value, updates []reflect.Value) (reflect.Value, error)
}

type reducerKind int

const (
	kindLast reducerKind = iota
	kindAppend
	kindMerge
	kindCustom
)

type lastValue struct{}

func (lastValue) reduce(ch *channel, _ reflect.Value, ups []reflect.Value) (reflect.Value, error) {
	if len(ups) > 1 {
		return reflect.Value{}, &InvalidUpdateError{Channel: ch.name,
			Reason: fmt.Sprintf("a last-value channel can receive only one value per step, got %d; give it a reducer (weft:\"append\", weft:\"merge\" or Builder.Reducer)", len(ups))}
	}
	return ups[0], nil
}

type appendReducer struct{}

func (appendReducer) reduce(_ *channel, cur reflect.Value, ups []reflect.Value) (reflect.Value, error) {
	for _, u := range ups {
		cur = reflect.AppendSlice(cur, u)
	}
	return cur, nil
}

type mergeReducer struct{}

func (mergeReducer) reduce(ch *channel, cur reflect.Value, ups []reflect.Value) (reflect.Value, error) {
	out := reflect.MakeMapWithSize(ch.typ, cur.Len()+len(ups))
	iter := cur.MapRange()
	for iter.Next() {
		out.SetMapIndex(iter.Key(), iter.Value())
	}
	for _, u := range ups {
		iter := u.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), iter.Value())
		}
	}
	return out, nil
}

type funcReducer[T any] struct{ f func(cur, update T) T }

func (r funcReducer[T]) reduce(ch *channel, cur reflect.Value, ups []reflect.Value) (reflect.Value, error) {
	if ch.typ != reflect.TypeFor[T]() {
		return reflect.Value{}, fmt.Errorf("reducer for %q takes %v, channel holds %v", ch.name, reflect.TypeFor[T](), ch.typ)
	}
	v := cur.Interface().(T)
	for _, u := range ups {
		v = r.f(v, u.Interface().(T))
	}
	return reflect.ValueOf(&v).Elem(), nil
}

// ReducerFunc makes a custom reducer from a typed fold function.
func ReducerFunc[T any](f func(cur, update T) T) Reducer { return funcReducer[T]{f} }

// channel is one field of the state struct.
type channel struct {
	name    string
	index   int
	typ     reflect.Type
	kind    reducerKind
	reducer Reducer
	custom  bool // tag asked for a custom reducer registered on the builder
}

// schema is the set of channels of a state type.
type schema struct {
	typ      reflect.Type
	channels []*channel
	byName   map[string]*channel
}

func newSchema(t reflect.Type) (*schema, []string) {
	var problems []string
	if t.Kind() != reflect.Struct {
		return nil, []string{fmt.Sprintf("state type %v is not a struct", t)}
	}
	s := &schema{typ: t, byName: map[string]*channel{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" {
				continue
			}
			if n != "" {
				name = n
			}
		}
		ch := &channel{name: name, index: i, typ: f.Type, kind: kindLast, reducer: lastValue{}}
		switch tag := f.Tag.Get("weft"); tag {
		case "", "last":
		case "append":
			if f.Type.Kind() != reflect.Slice {
				problems = append(problems, fmt.Sprintf("channel %q: append reducer needs a slice, field is %v", name, f.Type))
			}
			ch.kind, ch.reducer = kindAppend, appendReducer{}
		case "merge":
			if f.Type.Kind() != reflect.Map {
				problems = append(problems, fmt.Sprintf("channel %q: merge reducer needs a map, field is %v", name, f.Type))
			}
			ch.kind, ch.reducer = kindMerge, mergeReducer{}
		case "custom":
			ch.kind, ch.custom = kindCustom, true
		default:
			problems = append(problems, fmt.Sprintf("channel %q: unknown reducer tag %q (want last, append, merge or custom)", name, tag))
		}
		if _, dup := s.byName[name]; dup {
			problems = append(problems, fmt.Sprintf("channel %q declared twice", name))
		}
		s.byName[name] = ch
		s.channels = append(s.channels, ch)
	}
	return s, problems
}

// update is a write validated against its channel.
type update struct {
	ch        *channel
	val       reflect.Value
	overwrite bool
}

// coerce turns a write's value into a value of the channel's type: exact
// values, single elements for append channels (wrapped in a one-item slice),
// JSON (from a persisted write or a cache hit) and Overwrite.
func (ch *channel) coerce(v any) (update, error) {
	u := update{ch: ch}
	if o, ok := v.(Overwrite); ok {
		u.overwrite = true
		v = o.Value
	}
	if raw, ok := v.(json.RawMessage); ok {
		p := reflect.New(ch.typ)
		if err := json.Unmarshal(raw, p.Interface()); err != nil {
			return u, fmt.Errorf("decode write to %q: %w", ch.name, err)
		}
		u.val = p.Elem()
		return u, nil
	}
	if v == nil {
		u.val = reflect.Zero(ch.typ)
		return u, nil
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.Type() == ch.typ:
		u.val = rv
	case rv.Type().AssignableTo(ch.typ):
		nv := reflect.New(ch.typ).Elem()
		nv.Set(rv)
		u.val = nv
	case ch.kind == kindAppend && rv.Type().AssignableTo(ch.typ.Elem()):
		s := reflect.MakeSlice(ch.typ, 1, 1)
		s.Index(0).Set(rv)
		u.val = s
	case rv.CanConvert(ch.typ) && isNumber(rv.Kind()) && isNumber(ch.typ.Kind()):
		u.val = rv.Convert(ch.typ)
	default:
		return u, fmt.Errorf("write to %q: channel holds %v, got %T", ch.name, ch.typ, v)
	}
	return u, nil
}

func isNumber(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Float64
}

// encodeUpdate is the JSON stored for a pending write.
func encodeUpdate(u update) ([]byte, error) {
	b, err := json.Marshal(u.val.Interface())
	if err != nil {
		return nil, fmt.Errorf("encode write to %q: %w", u.ch.name, err)
	}
	if u.overwrite {
		return append(append([]byte(`{"__overwrite__":`), b...), '}'), nil
	}
	return b, nil
}

// decodeUpdate reverses encodeUpdate.
func (ch *channel) decodeUpdate(data []byte) (update, error) {
	const prefix = `{"__overwrite__":`
	if len(data) > len(prefix) && string(data[:len(prefix)]) == prefix {
		u, err := ch.coerce(json.RawMessage(data[len(prefix) : len(data)-1]))
		u.overwrite = true
		return u, err
	}
	return ch.coerce(json.RawMessage(data))
}
