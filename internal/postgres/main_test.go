package postgres_test

import (
	"testing"

	"weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
