// Package static holds the console's browser assets: pinned htmx 2 and its SSE extension
// (vendor/, see vendor/VERSIONS.txt), the stylesheet (css/) and the icon (img/). It imports only the standard
// library.
package static

import "embed"

// FS holds vendor/, css/ and img/, rooted at this folder (paths like "vendor/htmx.min.js").
//
//go:embed vendor css img
var FS embed.FS
