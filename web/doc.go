// Package web holds templ components and view models (layout/, component/,
// page/); it imports nothing from internal/, db/, pgx or echo.
package web
