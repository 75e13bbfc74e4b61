// Package graph is Weft's workflow engine: a typed state graph in the LangGraph
// model. State is a Go struct whose exported fields are channels, each with a
// reducer. Nodes read the typed state and return writes (data, so they can be
// persisted). A compiled graph runs in supersteps: the tasks planned for a step
// run in parallel, their writes are applied together at the end of the step in
// a deterministic order, and one checkpoint is saved through a Checkpointer.
//
// The package declares the interfaces it consumes (Checkpointer, Cache, Clock)
// and imports only the standard library and a UUID package. Stores live in
// other packages (internal/checkpoint for the in-memory saver, internal/postgres
// for the durable one) and import this one, never the other way round.
package graph
