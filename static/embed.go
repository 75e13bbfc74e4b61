// Package static holds the console's browser assets: pinned htmx 2 and its SSE extension
// (vendor/, see vendor/VERSIONS.txt), the stylesheet (css/), the icon (img/) and the
// console's own small scripts (js/). It imports only the standard
// library.
package static

import "embed"

// FS holds vendor/, css/, img/ and js/, rooted at this folder (paths like "vendor/htmx.min.js").
//
//go:embed vendor css img js
var FS embed.FS
