#!/usr/bin/python3
"""Builds PDF/A-3b test samples for pdfa_check.py without the product's PDF code (pikepdf only).

Usage: /usr/bin/python3 make_samples.py <output dir>

Writes good.pdf (a one-page PDF/A-3b file: embedded DejaVu Sans TrueType font, XMP with pdfaid 3/B in sync with
the Info dictionary, an sRGB GTS_PDFA1 OutputIntent, a printable annotation with an appearance, an embedded JSON
file listed in the catalog's /AF), signed.pdf (the same with a signature field whose /ByteRange covers the
file; its /Contents is a placeholder, not a CMS signature: pdfa_check.py does not read the CMS), and one variant
per broken rule (OBJECT_VARIANTS and main() below), each named <variant>.pdf; conformance.test.ts lists the clauses
each variant must fail.

Inputs (read, never modified):
- the font: Debian's fonts-dejavu-core (/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf), else the npm package
  dejavu-fonts-ttf under node_modules;
- the sRGB ICC profile: Debian's colord-data (/usr/share/color/icc/colord/sRGB.icc, an lcms-built ICC v4 display
  profile), installed by .ci/install-tools.sh.
The output is deterministic (fixed dates, deterministic /ID).
"""

from __future__ import annotations

import io
import os
import re
import struct
import sys
import zlib

import pikepdf
from pikepdf import Array, Dictionary, Name, String

HERE = os.path.dirname(os.path.abspath(__file__))
FONT_PATHS = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    os.path.join(HERE, "../../../node_modules/dejavu-fonts-ttf/ttf/DejaVuSans.ttf"),
]
ICC_PATHS = ["/usr/share/color/icc/colord/sRGB.icc"]

PDF_DATE = "D:20261129120000-03'00'"
XMP_DATE = "2026-11-29T12:00:00-03:00"
TITLE = "Certidão de teste PDF/A-3b"
AUTHOR = "Tabelionato de Teste"
PRODUCER = "make_samples.py (pikepdf)"
CREATOR = "notary test harness"


def first_existing(paths: list[str]) -> str:
    for p in paths:
        if os.path.exists(p):
            return p
    raise SystemExit(f"none of these exist: {paths}")


# ---------------------------------------------------------------------------------------------------------------
# TrueType metrics (just what a simple WinAnsi font dictionary needs)


def ttf_metrics(data: bytes) -> dict:
    num = struct.unpack(">H", data[4:6])[0]
    tables = {}
    for i in range(num):
        tag, _, off, length = struct.unpack(">4sIII", data[12 + 16 * i : 28 + 16 * i])
        tables[tag.decode("latin-1")] = (off, length)
    head = tables["head"][0]
    upem = struct.unpack(">H", data[head + 18 : head + 20])[0]
    bbox = struct.unpack(">hhhh", data[head + 36 : head + 44])
    hhea = tables["hhea"][0]
    ascent, descent = struct.unpack(">hh", data[hhea + 4 : hhea + 8])
    n_hmetrics = struct.unpack(">H", data[hhea + 34 : hhea + 36])[0]
    hmtx = tables["hmtx"][0]
    advances = [struct.unpack(">H", data[hmtx + 4 * i : hmtx + 4 * i + 2])[0] for i in range(n_hmetrics)]
    cmap = tables["cmap"][0]
    n_sub = struct.unpack(">H", data[cmap + 2 : cmap + 4])[0]
    sub = None
    for i in range(n_sub):
        plat, enc, off = struct.unpack(">HHI", data[cmap + 4 + 8 * i : cmap + 12 + 8 * i])
        if plat == 3 and enc == 1 and struct.unpack(">H", data[cmap + off : cmap + off + 2])[0] == 4:
            sub = cmap + off
    if sub is None:
        raise SystemExit("no (3,1) format 4 cmap")
    segx2 = struct.unpack(">H", data[sub + 6 : sub + 8])[0]
    ends = struct.unpack(f">{segx2 // 2}H", data[sub + 14 : sub + 14 + segx2])
    starts_off = sub + 16 + segx2
    starts = struct.unpack(f">{segx2 // 2}H", data[starts_off : starts_off + segx2])
    deltas = struct.unpack(f">{segx2 // 2}h", data[starts_off + segx2 : starts_off + 2 * segx2])
    ro_off = starts_off + 2 * segx2
    range_offsets = struct.unpack(f">{segx2 // 2}H", data[ro_off : ro_off + segx2])

    def gid(ch: int) -> int:
        for k, end in enumerate(ends):
            if ch <= end:
                if ch < starts[k]:
                    return 0
                if range_offsets[k] == 0:
                    return (ch + deltas[k]) & 0xFFFF
                addr = ro_off + 2 * k + range_offsets[k] + 2 * (ch - starts[k])
                g = struct.unpack(">H", data[addr : addr + 2])[0]
                return (g + deltas[k]) & 0xFFFF if g else 0
        return 0

    def width(ch: int) -> int:
        g = gid(ch)
        adv = advances[g] if g < len(advances) else advances[-1]
        return round(adv * 1000 / upem)

    scale = 1000 / upem
    return {
        "widths": [width(c) for c in range(32, 127)],
        "bbox": [round(v * scale) for v in bbox],
        "ascent": round(ascent * scale),
        "descent": round(descent * scale),
    }


def embed_font(pdf: pikepdf.Pdf) -> pikepdf.Object:
    data = open(first_existing(FONT_PATHS), "rb").read()
    m = ttf_metrics(data)
    ff = pikepdf.Stream(pdf, zlib.compress(data))
    ff.Filter = Name.FlateDecode
    ff.Length1 = len(data)
    descriptor = Dictionary(
        Type=Name.FontDescriptor,
        FontName=Name("/DejaVuSans"),
        Flags=32,
        FontBBox=Array(m["bbox"]),
        ItalicAngle=0,
        Ascent=m["ascent"],
        Descent=m["descent"],
        CapHeight=m["ascent"],
        StemV=80,
        FontFile2=ff,
    )
    return pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.TrueType,
            BaseFont=Name("/DejaVuSans"),
            FirstChar=32,
            LastChar=126,
            Widths=Array(m["widths"]),
            Encoding=Name.WinAnsiEncoding,
            FontDescriptor=pdf.make_indirect(descriptor),
        )
    )


# ---------------------------------------------------------------------------------------------------------------
# XMP


def xmp_packet(part: int = 3, conformance: str = "B", title: str = TITLE, header_extra: str = "") -> bytes:
    return f"""<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"{header_extra}?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/">
   <pdfaid:part>{part}</pdfaid:part>
   <pdfaid:conformance>{conformance}</pdfaid:conformance>
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">
   <dc:format>application/pdf</dc:format>
   <dc:title><rdf:Alt><rdf:li xml:lang="x-default">{title}</rdf:li></rdf:Alt></dc:title>
   <dc:creator><rdf:Seq><rdf:li>{AUTHOR}</rdf:li></rdf:Seq></dc:creator>
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">
   <xmp:CreatorTool>{CREATOR}</xmp:CreatorTool>
   <xmp:CreateDate>{XMP_DATE}</xmp:CreateDate>
   <xmp:ModifyDate>{XMP_DATE}</xmp:ModifyDate>
   <xmp:MetadataDate>{XMP_DATE}</xmp:MetadataDate>
  </rdf:Description>
  <rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">
   <pdf:Producer>{PRODUCER}</pdf:Producer>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>""".encode()


def set_xmp(pdf: pikepdf.Pdf, packet: bytes) -> None:
    md = pikepdf.Stream(pdf, packet)
    md.Type = Name.Metadata
    md.Subtype = Name.XML
    pdf.Root.Metadata = pdf.make_indirect(md)


# ---------------------------------------------------------------------------------------------------------------
# The good sample


def build_good() -> pikepdf.Pdf:
    pdf = pikepdf.new()
    pdf.add_blank_page(page_size=(595, 842))
    page = pdf.pages[0]
    font = embed_font(pdf)
    content = (
        b"q 0.1 0.3 0.7 rg 72 600 200 40 re f Q\n"
        b"BT /F1 20 Tf 72 700 Td (Certidao de teste PDF/A-3b) Tj ET\n"
    )
    page.obj.Contents = pdf.make_stream(content)
    page.obj.Resources = Dictionary(Font=Dictionary(F1=font))

    # A printable square annotation with a normal appearance (DeviceRGB stroke, allowed with the sRGB intent).
    ap = pdf.make_stream(b"0 0 1 RG 2 w 1 1 98 48 re S\n")
    ap.Type = Name.XObject
    ap.Subtype = Name.Form
    ap.BBox = Array([0, 0, 100, 50])
    annot = Dictionary(
        Type=Name.Annot, Subtype=Name.Square, Rect=Array([300, 500, 400, 550]), F=4, AP=Dictionary(N=ap)
    )
    page.obj.Annots = pdf.make_indirect(Array([pdf.make_indirect(annot)]))

    # sRGB output intent (colord-data's profile).
    icc_bytes = open(first_existing(ICC_PATHS), "rb").read()
    icc = pikepdf.Stream(pdf, zlib.compress(icc_bytes))
    icc.Filter = Name.FlateDecode
    icc.N = 3
    pdf.Root.OutputIntents = Array(
        [
            Dictionary(
                Type=Name.OutputIntent,
                S=Name.GTS_PDFA1,
                OutputConditionIdentifier=String("sRGB"),
                Info=String("sRGB IEC61966-2.1"),
                DestOutputProfile=pdf.make_indirect(icc),
            )
        ]
    )

    # An associated JSON file (PDF/A-3 6.8).
    payload = b'{"kind":"test","ok":true}\n'
    ef = pikepdf.Stream(pdf, payload)
    ef.Type = Name.EmbeddedFile
    ef.Subtype = Name("/application/json")
    ef.Params = Dictionary(ModDate=String(PDF_DATE), Size=len(payload))
    spec = pdf.make_indirect(
        Dictionary(
            Type=Name.Filespec,
            F=String("data.json"),
            UF=String("data.json"),
            Desc=String("test data"),
            AFRelationship=Name.Data,
            EF=Dictionary(F=pdf.make_indirect(ef), UF=ef),
        )
    )
    pdf.Root.Names = Dictionary(EmbeddedFiles=Dictionary(Names=Array([String("data.json"), spec])))
    pdf.Root.AF = Array([spec])

    set_xmp(pdf, xmp_packet())
    pdf.trailer.Info = pdf.make_indirect(
        Dictionary(
            Title=String(TITLE),
            Author=String(AUTHOR),
            Creator=String(CREATOR),
            Producer=String(PRODUCER),
            CreationDate=String(PDF_DATE),
            ModDate=String(PDF_DATE),
        )
    )
    return pdf


def save(pdf: pikepdf.Pdf, path: str, **kw) -> None:
    if "encryption" not in kw:
        # Streams are written as built (qpdf would otherwise recode the LZW and filtered-metadata variants).
        kw["stream_decode_level"] = pikepdf.StreamDecodeLevel.none
    pdf.save(
        path,
        static_id=True,
        object_stream_mode=pikepdf.ObjectStreamMode.disable,
        fix_metadata_version=False,
        **kw,
    )


def reopen(path: str) -> pikepdf.Pdf:
    return pikepdf.Pdf.open(path)


# ---------------------------------------------------------------------------------------------------------------
# Signatures and incremental updates (byte level)


SIG_HEX_LEN = 2048  # bytes of /Contents (4096 hex digits)
PLACEHOLDER = [0, 1111111111, 2222222222, 3333333333]


def add_signature(pdf: pikepdf.Pdf, docmdp_p: int | None = None) -> None:
    contents = b"\x30\x82\x01\x00" + b"\x00" * (SIG_HEX_LEN - 4)
    sig = pdf.make_indirect(
        Dictionary(
            Type=Name.Sig,
            Filter=Name("/Adobe.PPKLite"),
            SubFilter=Name("/ETSI.CAdES.detached"),
            ByteRange=Array(PLACEHOLDER),
            Contents=String(contents),
            M=String(PDF_DATE),
        )
    )
    page = pdf.pages[0]
    widget = pdf.make_indirect(
        Dictionary(
            Type=Name.Annot,
            Subtype=Name.Widget,
            FT=Name.Sig,
            T=String("Signature1"),
            V=sig,
            Rect=Array([0, 0, 0, 0]),
            F=132,
            P=page.obj,
        )
    )
    page.obj.Annots.append(widget)
    pdf.Root.AcroForm = Dictionary(Fields=Array([widget]), SigFlags=3)
    if docmdp_p is not None:
        sig.Reference = Array(
            [
                Dictionary(
                    Type=Name.SigRef,
                    TransformMethod=Name.DocMDP,
                    TransformParams=Dictionary(Type=Name.TransformParams, P=docmdp_p, V=Name("/1.2")),
                )
            ]
        )
        pdf.Root.Perms = Dictionary(DocMDP=sig)


def fix_byterange(data: bytes, end_adjust: int = 0, inner_gap: bool = False) -> bytes:
    """Fills the placeholder /ByteRange so the gap is the /Contents hex string (brackets included)."""
    m = re.search(rb"<(308201000{%d})>" % (SIG_HEX_LEN * 2 - 8), data, re.IGNORECASE)
    if not m:
        raise SystemExit("signature /Contents not found")
    b, c = m.start(), m.end()
    if inner_gap:
        b, c = b + 1, c - 1
    d = len(data) - c + end_adjust
    ph = re.search(rb"\[\s*0 1111111111 2222222222 3333333333\s*\]", data)
    if not ph:
        raise SystemExit("ByteRange placeholder not found")
    text = f"[0 {b} {c} {d}]".encode()
    text = text + b" " * (len(ph.group(0)) - len(text))
    return data[: ph.start()] + text + data[ph.end() :]


def append_update(data: bytes, objects: dict[int, bytes], drop_id: bool = False) -> bytes:
    """Appends an incremental update (classic xref section) replacing or adding `objects` (number -> body)."""
    with pikepdf.Pdf.open(io.BytesIO(data)) as pdf:
        size = max(int(pdf.trailer.Size), max(objects) + 1)
        root = pdf.Root.objgen[0]
        info = pdf.trailer.Info.objgen[0]
        ident = pdf.trailer.ID.unparse()
    prev = int(re.findall(rb"startxref\s+(\d+)", data)[-1])
    out = bytearray(data)
    offsets = {}
    for num in sorted(objects):
        offsets[num] = len(out)
        out += b"%d 0 obj\n" % num + objects[num] + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n"
    for num in sorted(objects):
        out += b"%d 1\n%010d 00000 n \n" % (num, offsets[num])
    out += b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R /Prev %d" % (size, root, info, prev)
    if not drop_id:
        out += b" /ID " + ident
    out += b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def catalog_update(data: bytes, edit) -> dict[int, bytes]:
    """The current catalog, changed by edit(catalog, next free object number) -> extra objects."""
    with pikepdf.Pdf.open(io.BytesIO(data)) as pdf:
        cat = pdf.Root
        num = cat.objgen[0]
        size = int(pdf.trailer.Size)
        extra = edit(cat, size) or {}
        body = cat.unparse(resolved=True)
    return {num: body, **extra}


# ---------------------------------------------------------------------------------------------------------------
# Variants


def lzw_literals(data: bytes) -> bytes:
    """LZW (early change) encoding using only literal codes, 9 bits wide: short inputs only."""
    assert len(data) < 200
    bits = "".join(format(c, "09b") for c in [256, *data, 257])
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8))


def variant(name: str, pdf: pikepdf.Pdf) -> None:
    """Applies one object-level change to the good sample (see SAMPLES)."""
    page = pdf.pages[0]
    res = page.obj.Resources
    if name == "font-not-embedded":
        res.Font.F2 = Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
        page.obj.Contents.write(page.obj.Contents.read_bytes() + b"BT /F2 12 Tf 72 650 Td (x) Tj ET\n")
    elif name == "annotation-font-not-embedded":
        ap = page.obj.Annots[0].AP.N
        ap.Resources = Dictionary(Font=Dictionary(H=Dictionary(Type=Name.Font, Subtype=Name.Type1,
                                                               BaseFont=Name.Helvetica)))
        ap.write(ap.read_bytes() + b"BT /H 10 Tf 5 20 Td (x) Tj ET\n")
    elif name == "no-output-intent":
        del pdf.Root.OutputIntents
    elif name == "icc-n-mismatch":
        pdf.Root.OutputIntents[0].DestOutputProfile.N = 4
    elif name == "two-profiles":
        oi = pdf.Root.OutputIntents[0]
        other = pikepdf.Stream(pdf, oi.DestOutputProfile.read_raw_bytes())
        other.Filter = Name.FlateDecode
        other.N = 3
        pdf.Root.OutputIntents.append(
            Dictionary(Type=Name.OutputIntent, S=Name.GTS_PDFX, OutputConditionIdentifier=String("x"),
                       DestOutputProfile=pdf.make_indirect(other))
        )
    elif name == "cmyk-with-rgb-intent":
        page.obj.Contents.write(page.obj.Contents.read_bytes() + b"q 0 0 0 1 k 72 500 50 50 re f Q\n")
    elif name == "cmyk-image-in-form":
        img = pikepdf.Stream(pdf, b"\x00\x00\x00\xff")
        img.Type, img.Subtype, img.Width, img.Height = Name.XObject, Name.Image, 1, 1
        img.ColorSpace, img.BitsPerComponent = Name.DeviceCMYK, 8
        form = pdf.make_stream(b"q 10 0 0 10 0 0 cm /Im0 Do Q\n")
        form.Type, form.Subtype, form.BBox = Name.XObject, Name.Form, Array([0, 0, 10, 10])
        form.Resources = Dictionary(XObject=Dictionary(Im0=img))
        res.XObject = Dictionary(Fm0=form)
        page.obj.Contents.write(page.obj.Contents.read_bytes() + b"q /Fm0 Do Q\n")
    elif name == "info-title-differs":
        pdf.trailer.Info.Title = String("Outro título")
    elif name == "info-date-differs":
        pdf.trailer.Info.ModDate = String("D:20261129120000Z")
    elif name == "info-date-same-instant":
        pdf.trailer.Info.ModDate = String("D:20261129150000Z")
    elif name == "xmp-encoding-attribute":
        set_xmp(pdf, xmp_packet(header_extra=' encoding="UTF-8"'))
    elif name == "declares-pdfa2":
        set_xmp(pdf, xmp_packet(part=2))
    elif name == "no-metadata":
        del pdf.Root.Metadata
    elif name == "no-afrelationship":
        del pdf.Root.AF[0].AFRelationship
    elif name == "no-uf":
        del pdf.Root.AF[0].UF
    elif name == "no-moddate":
        del pdf.Root.AF[0].EF.F.Params.ModDate
    elif name == "no-mime-subtype":
        del pdf.Root.AF[0].EF.F.Subtype
    elif name == "not-in-af":
        del pdf.Root.AF
    elif name == "javascript-openaction":
        pdf.Root.OpenAction = Dictionary(Type=Name.Action, S=Name.JavaScript, JS=String("app.alert(1)"))
    elif name == "page-aa":
        page.obj.AA = Dictionary(O=Dictionary(S=Name.URI, URI=String("https://example.test/")))
    elif name == "annotation-hidden":
        page.obj.Annots[0].F = 6
    elif name == "annotation-no-flags":
        del page.obj.Annots[0].F
    elif name == "annotation-no-appearance":
        del page.obj.Annots[0].AP
    elif name == "reference-xobject":
        form = pdf.make_stream(b"")
        form.Type, form.Subtype, form.BBox = Name.XObject, Name.Form, Array([0, 0, 10, 10])
        form.Ref = Dictionary(F=Dictionary(Type=Name.Filespec, F=String("other.pdf")), Page=0)
        res.XObject = Dictionary(Fm0=form)
        page.obj.Contents.write(page.obj.Contents.read_bytes() + b"q /Fm0 Do Q\n")
    elif name == "image-interpolate":
        img = pikepdf.Stream(pdf, b"\x00\x80\xff")
        img.Type, img.Subtype, img.Width, img.Height = Name.XObject, Name.Image, 1, 1
        img.ColorSpace, img.BitsPerComponent, img.Interpolate = Name.DeviceRGB, 8, True
        res.XObject = Dictionary(Im0=img)
        page.obj.Contents.write(page.obj.Contents.read_bytes() + b"q 10 0 0 10 72 300 cm /Im0 Do Q\n")
    elif name == "stream-external-file":
        page.obj.Annots[0].AP.N.FFilter = Name.FlateDecode
    elif name == "perms-extra-key":
        pdf.Root.Perms = Dictionary(UR=Dictionary())
    elif name == "need-appearances":
        pdf.Root.AcroForm = Dictionary(Fields=Array(), NeedAppearances=True)
    elif name == "blend-mode-unknown":
        res.ExtGState = Dictionary(GS0=Dictionary(Type=Name.ExtGState, BM=Name("/Foo")))
        page.obj.Contents.write(page.obj.Contents.read_bytes() + b"q /GS0 gs Q\n")
    elif name == "launch-action-on-link":
        page.obj.Annots.append(
            pdf.make_indirect(
                Dictionary(Type=Name.Annot, Subtype=Name.Link, Rect=Array([72, 100, 200, 120]), F=4,
                           A=Dictionary(S=Name.Launch, F=String("calc.exe")))
            )
        )
    elif name == "javascript-name-tree":
        pdf.Root.Names.JavaScript = Dictionary(
            Names=Array([String("x"), Dictionary(S=Name.JavaScript, JS=String("app.alert(1)"))])
        )
    elif name == "transparency-without-intent":
        del pdf.Root.OutputIntents
        res.ExtGState = Dictionary(GS0=Dictionary(Type=Name.ExtGState, ca=0.5))
        page.obj.Contents.write(page.obj.Contents.read_bytes() + b"q /GS0 gs 72 400 50 50 re f Q\n")
    else:
        raise SystemExit(f"unknown variant {name}")


OBJECT_VARIANTS = [
    "font-not-embedded", "annotation-font-not-embedded", "no-output-intent", "icc-n-mismatch", "two-profiles",
    "cmyk-with-rgb-intent", "cmyk-image-in-form", "info-title-differs", "info-date-differs",
    "info-date-same-instant", "xmp-encoding-attribute", "declares-pdfa2", "no-metadata",
    "no-afrelationship", "no-uf", "no-moddate", "no-mime-subtype", "not-in-af", "javascript-openaction", "page-aa",
    "annotation-hidden", "annotation-no-flags", "annotation-no-appearance", "reference-xobject",
    "transparency-without-intent", "image-interpolate", "stream-external-file", "perms-extra-key",
    "need-appearances", "blend-mode-unknown", "launch-action-on-link", "javascript-name-tree",
]


def signed_bytes(out: str, docmdp_p: int | None = None, **fix) -> bytes:
    pdf = build_good()
    add_signature(pdf, docmdp_p)
    tmp = os.path.join(out, ".signed-tmp.pdf")
    save(pdf, tmp)
    data = open(tmp, "rb").read()
    os.unlink(tmp)
    return fix_byterange(data, **fix)


def shorten_content_length(data: bytes) -> bytes:
    """The page content stream's /Length one byte short, written in the same number of digits (offsets stay)."""
    with pikepdf.Pdf.open(io.BytesIO(data)) as pdf:
        num = pdf.pages[0].obj.Contents.objgen[0]
    m = re.compile(rb"\n%d 0 obj\s*<<[^>]*?/Length (\d+)" % num).search(data)
    n = int(m.group(1))
    new = str(n - 1 if len(str(n - 1)) == len(str(n)) else n + 1).encode()
    return data[: m.start(1)] + new + data[m.end(1) :]


def restream(data: bytes, pick, encode, filter_name: str) -> dict[int, bytes]:
    """An update body re-encoding the stream pick(pdf) with `encode` under /Filter `filter_name`."""
    with pikepdf.Pdf.open(io.BytesIO(data)) as pdf:
        stream = pick(pdf)
        num = stream.objgen[0]
        raw = encode(stream.read_bytes())
        d = stream.stream_dict
        kept = [k for k in d.keys() if str(k) not in ("/Length", "/Filter")]
        keys = b"".join(b" " + str(k).encode() + b" " + d[k].unparse() for k in kept)
    head = b"<<%s /Filter %s /Length %d >>\nstream\n" % (keys, filter_name.encode(), len(raw))
    return {num: head + raw + b"\nendstream"}


def dss_update(data: bytes) -> bytes:
    def edit(cat, free):
        cat.DSS = pikepdf.Object.parse(b"<< >>")
        return {}

    objects = catalog_update(data, edit)
    return append_update(data, objects)


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    good = os.path.join(out, "good.pdf")
    save(build_good(), good)
    for name in OBJECT_VARIANTS:
        with reopen(good) as pdf:
            variant(name, pdf)
            save(pdf, os.path.join(out, f"{name}.pdf"))
    with reopen(good) as pdf:
        # metadata=False: qpdf would otherwise compress the encrypted XMP, a second fault in the same sample.
        save(pdf, os.path.join(out, "encrypted.pdf"),
             encryption=pikepdf.Encryption(owner="owner", user="", R=4, aes=True, metadata=False))
        save(pdf, os.path.join(out, "encrypted-user-password.pdf"),
             encryption=pikepdf.Encryption(owner="owner", user="secret", R=6))

    data = open(good, "rb").read()
    # Same length, no byte > 127: the binary comment after the header is gone.
    hdr = re.match(rb"%PDF-1\.\d\r?\n%([^\r\n]*)", data)
    start, end = hdr.span(1)
    open(os.path.join(out, "header-no-binary-comment.pdf"), "wb").write(
        data[:start] + b"a" * (end - start) + data[end:]
    )
    open(os.path.join(out, "data-after-eof.pdf"), "wb").write(data + b"trailing garbage\n")
    open(os.path.join(out, "stream-length-wrong.pdf"), "wb").write(shorten_content_length(data))
    # qpdf always writes metadata unfiltered and recodes LZW on save: these two are incremental updates instead.
    open(os.path.join(out, "metadata-filtered.pdf"), "wb").write(
        append_update(data, restream(data, lambda pdf: pdf.Root.Metadata, zlib.compress, "/FlateDecode"))
    )
    open(os.path.join(out, "lzw-stream.pdf"), "wb").write(
        append_update(data, restream(data, lambda pdf: pdf.pages[0].obj.Contents, lzw_literals, "/LZWDecode"))
    )
    open(os.path.join(out, "update-without-id.pdf"), "wb").write(
        append_update(data, catalog_update(data, lambda cat, free: {}), drop_id=True)
    )
    open(os.path.join(out, "update-drops-metadata.pdf"), "wb").write(
        append_update(data, catalog_update(data, lambda cat, free: cat.__delitem__("/Metadata")))
    )

    signed = signed_bytes(out)
    open(os.path.join(out, "signed.pdf"), "wb").write(signed)
    open(os.path.join(out, "signed-then-updated.pdf"), "wb").write(dss_update(signed))
    open(os.path.join(out, "signed-byterange-short.pdf"), "wb").write(signed_bytes(out, end_adjust=-10))
    open(os.path.join(out, "signed-gap-without-brackets.pdf"), "wb").write(signed_bytes(out, inner_gap=True))
    open(os.path.join(out, "docmdp-p1-then-updated.pdf"), "wb").write(dss_update(signed_bytes(out, docmdp_p=1)))
    open(os.path.join(out, "docmdp-p2-then-updated.pdf"), "wb").write(dss_update(signed_bytes(out, docmdp_p=2)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: make_samples.py <output dir>")
    main(sys.argv[1])
