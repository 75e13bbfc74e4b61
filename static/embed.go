// Package static holds the console's browser assets: pinned htmx 2 and its SSE extension
// (vendor/, see vendor/VERSIONS.txt) and the stylesheet (css/). It imports only the standard
// library.
package static

import "embed"

// FS holds vendor/ and css/, rooted at this folder (paths like "vendor/htmx.min.js").
//
//go:embed vendor css
var FS embed.FS
