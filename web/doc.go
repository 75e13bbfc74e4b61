// Package web holds templ components and view models; it imports nothing from internal/, db/, pgx or echo.
package web
