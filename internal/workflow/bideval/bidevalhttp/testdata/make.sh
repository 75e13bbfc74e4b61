#!/bin/sh
# Makes the fixtures (see README.md). Needs pandoc, soffice (libreoffice-writer-nogui), qpdf, python3.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
pandoc -o "$tmp/kranbau-bid.docx" kranbau-bid.md
pandoc -o lift-bid.docx lift-bid.md
python3 -c 'import zlib,struct
def chunk(t,d): return struct.pack(">I",len(d))+t+d+struct.pack(">I",zlib.crc32(t+d)&0xffffffff)
w,h=200,100
raw=b"".join(b"\x00"+bytes(((x*y)%251) for x in range(w)) for y in range(h))
open("'"$tmp"'/scan.png","wb").write(b"\x89PNG\r\n\x1a\n"+chunk(b"IHDR",struct.pack(">IIBBBBB",w,h,8,0,0,0,0))+chunk(b"IDAT",zlib.compress(raw))+chunk(b"IEND",b""))'
printf '![](scan.png)\n' > "$tmp/scan.md"
(cd "$tmp" && pandoc -o scan.docx scan.md)
soffice -env:UserInstallation=file://"$tmp/profile" --headless --convert-to pdf --outdir "$tmp" "$tmp/kranbau-bid.docx" "$tmp/scan.docx" >/dev/null
cp "$tmp/kranbau-bid.pdf" kranbau-bid.pdf
cp "$tmp/scan.pdf" scan.pdf
qpdf --encrypt user-secret owner-secret 256 -- kranbau-bid.pdf locked.pdf
printf 'not a word document\n' > "$tmp/notes.txt"
(cd "$tmp" && python3 -c 'import zipfile; z=zipfile.ZipFile("not-really.docx","w"); z.write("notes.txt"); z.close()')
cp "$tmp/not-really.docx" not-really.docx
rm -rf "$tmp"
