package dataagentpg

// AsAnalyst exposes the analyst transaction to tests, to show what the
// database itself refuses behind the parser.
var AsAnalyst = asAnalyst
