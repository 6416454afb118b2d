#!/usr/bin/python3
"""Independent PDF/A-3b conformance check (a subset of ISO 19005-3), run by Debian's /usr/bin/python3.

Usage: /usr/bin/python3 pdfa_check.py <file.pdf>...

Prints one JSON object per file, one a line, on stdout:
  {"declared": {"part": 3, "conformance": "B"} | null,
   "failures": [{"clause": "6.2.3", "message": "..."}],
   "notes": [{"clause": "6.4.3", "message": "..."}],
   "checked": ["6.1.2", ...]}

The file is read with qpdf (`qpdf --check`) and pikepdf only, never with the product's own PDF code, so the
check is independent of what it checks. Clause ids are ISO 19005-3 clause numbers as veraPDF's rule ids name
them; `checked` lists the clauses this script examines (see CLAUSES below for exactly what, per clause). It does
NOT check everything those clauses require (no glyph/width checks, no CMS content of signatures, no XMP extension
schemas): a pass here is "none of the listed checks failed", not "valid PDF/A-3b". A broken or password-protected
file gives failure entries, never an exception.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pikepdf
from pikepdf import Array, Dictionary, Name, Stream

# Clause id -> what this script checks for it (mirrored in conformance.testing.ts PDFA_CHECKED_CLAUSES).
CLAUSES = {
    "6.1.2": "file header: %PDF-1.n (n 0-7) at byte 0, then EOL, then a % comment with at least 4 bytes > 127",
    "6.1.3": "trailer: /ID present, no /Encrypt, nothing after the last %%EOF but one EOL",
    "6.1.4": "cross-reference and objects: `qpdf --check` exits 0 (xref, object syntax, stream lengths, decoding)",
    "6.1.5": "Info dictionary entries equal their XMP equivalents (Title, Author, Subject, Keywords, Creator, "
    "Producer, CreationDate, ModDate; dates as instants)",
    "6.1.7.1": "no stream dictionary has /F, /FFilter or /FDecodeParms",
    "6.1.7.2": "no stream uses the LZWDecode or Crypt filter",
    "6.1.12": "/Perms holds only /UR3 and /DocMDP; no DocMDP /P 1 signature followed by later revisions",
    "6.2.3": "a /GTS_PDFA1 OutputIntent with an ICC DestOutputProfile (class prtr/mntr, version < 5, /N matching "
    "the header's colour space); all DestOutputProfiles are one object",
    "6.2.4.3": "DeviceRGB/DeviceCMYK/DeviceGray used in content (operators, images, inline images, shadings) "
    "only with a matching output intent or a Default colour space",
    "6.2.8": "no image XObject has /OPI or /Alternates or /Interpolate true",
    "6.2.9": "no reference XObjects (/Ref), no /OPI, /PS or /Subtype2 /PS in form XObjects, no PostScript XObjects",
    "6.2.10": "blend modes are ISO 32000-1 ones; a page using transparency has an output intent or a page "
    "group /CS",
    "6.2.11.4.1": "every font in the resources of pages, form XObjects, patterns and annotation appearances has "
    "an embedded font program (Type3 exempt; Type0 through its descendant)",
    "6.3.2": "every annotation but Popup has /F with Print set and Hidden, Invisible, NoView, ToggleNoView clear",
    "6.3.3": "every annotation but Popup, Link and zero-area ones has /AP with /N, and /AP has only /N",
    "6.4.1": "no /A or /AA on widgets and form fields; /NeedAppearances not true",
    "6.4.3": "every signature's /ByteRange is 4 integers from 0 whose gap is exactly the /Contents hex string "
    "and whose end is the end of a revision (later revisions reported as notes)",
    "6.5.1": "no Launch, JavaScript (actions or /Names /JavaScript) or other forbidden actions; named actions "
    "only Next/Prev/First/LastPage",
    "6.5.2": "no /AA on the catalog or pages",
    "6.6.2.1": "catalog /Metadata stream (/Type /Metadata, /Subtype /XML), UTF-8 well-formed XMP with an "
    "xpacket header without bytes/encoding; stricter than PDF/A-3 (as PDF/A-1 6.7.2): not filtered",
    "6.6.4": "XMP pdfaid:part is 3 and pdfaid:conformance is B",
    "6.8": "every embedded file (EmbeddedFiles name tree, file attachment annotations) is in an /AF array, has "
    "/AFRelationship, /F and /UF, a MIME /Subtype and (stricter than veraPDF) /Params /ModDate",
}

NS = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "dc": "http://purl.org/dc/elements/1.1/",
    "xmp": "http://ns.adobe.com/xap/1.0/",
    "pdf": "http://ns.adobe.com/pdf/1.3/",
    "pdfaid": "http://www.aiim.org/pdfa/ns/id/",
}
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"

FORBIDDEN_ACTIONS = {
    "Launch", "Sound", "Movie", "ResetForm", "ImportData", "Hide", "SetOCGState", "Rendition", "Trans",
    "GoTo3DView", "JavaScript", "SetState", "NoOp",
}
ALLOWED_NAMED = {"NextPage", "PrevPage", "FirstPage", "LastPage"}
BLEND_MODES = {
    "Normal", "Compatible", "Multiply", "Screen", "Overlay", "Darken", "Lighten", "ColorDodge", "ColorBurn",
    "HardLight", "SoftLight", "Difference", "Exclusion", "Hue", "Saturation", "Color", "Luminosity",
}
DEVICE_ALIASES = {
    "DeviceRGB": "DeviceRGB", "RGB": "DeviceRGB",
    "DeviceCMYK": "DeviceCMYK", "CMYK": "DeviceCMYK",
    "DeviceGray": "DeviceGray", "G": "DeviceGray",
}
ICC_SPACES = {b"RGB ": ("RGB", 3), b"GRAY": ("GRAY", 1), b"CMYK": ("CMYK", 4)}


MAX_PER_CLAUSE = 10


class Report:
    """Collects failures, notes and the clauses examined."""

    def __init__(self) -> None:
        self.failures: list[dict[str, str]] = []
        self.notes: list[dict[str, str]] = []
        self.checked: list[str] = []
        self.declared: dict[str, object] | None = None
        self.per_clause: dict[str, int] = {}

    def fail(self, clause: str, message: str) -> None:
        entry = {"clause": clause, "message": message}
        if entry in self.failures:
            return
        # A long file repeats the same fault on every page: keep the report readable, keep the count.
        self.per_clause[clause] = self.per_clause.get(clause, 0) + 1
        if self.per_clause[clause] <= MAX_PER_CLAUSE:
            self.failures.append(entry)

    def finish(self) -> None:
        for clause, n in self.per_clause.items():
            if n > MAX_PER_CLAUSE:
                self.failures.append({"clause": clause, "message": f"... and {n - MAX_PER_CLAUSE} more"})

    def note(self, clause: str, message: str) -> None:
        self.notes.append({"clause": clause, "message": message})

    def run(self, clause: str, fn, *args) -> None:
        """Runs one clause's check; an unexpected error is a failure of that clause (never a silent pass)."""
        self.checked.append(clause)
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - a check that cannot finish must not pass
            self.fail(clause, f"could not be checked: {type(exc).__name__}: {exc}")


# ---------------------------------------------------------------------------------------------------------------
# Helpers


def name_of(obj) -> str | None:
    return str(obj)[1:] if isinstance(obj, Name) else None


def get(d, key: str):
    """d[key] or None, for pikepdf dictionaries and streams."""
    try:
        if d is None or not isinstance(d, (Dictionary, Stream)):
            return None
        return d.get("/" + key)
    except Exception:  # noqa: BLE001
        return None


def filters_of(stream) -> list[str]:
    f = get(stream, "Filter")
    if f is None:
        return []
    if isinstance(f, Array):
        return [name_of(x) or "?" for x in f]
    return [name_of(f) or "?"]


def objkey(obj):
    return obj.objgen if obj.is_indirect else id(obj)


def describe(obj) -> str:
    return f"object {obj.objgen[0]} {obj.objgen[1]} R" if obj.is_indirect else "a direct object"


def revision_ends(data: bytes) -> list[tuple[int, int]]:
    """(end after %%EOF, end after %%EOF and its optional EOL) for every %%EOF marker, in file order."""
    ends = []
    # A marker starts a line (or the file): "%%EOF" bytes inside compressed stream data rarely do.
    for m in re.finditer(rb"(?:^|(?<=[\r\n]))%%EOF", data):
        a = m.end()
        b = a
        if data[b : b + 2] == b"\r\n":
            b += 2
        elif data[b : b + 1] in (b"\r", b"\n"):
            b += 1
        ends.append((a, b))
    return ends


# ---------------------------------------------------------------------------------------------------------------
# File structure (byte level)


def check_header(data: bytes, r: Report) -> None:
    m = re.match(rb"%PDF-1\.([0-7])(\r\n|\r|\n)", data)
    if not m:
        r.fail("6.1.2", f"file does not start with %PDF-1.n (n 0-7) and an EOL: {data[:10]!r}")
        return
    rest = data[m.end() :]
    cm = re.match(rb"%([^\r\n]*)", rest)
    if not cm or sum(1 for b in cm.group(1)[:4] if b > 127) < 4:
        r.fail("6.1.2", "the header line is not followed by a comment of at least 4 bytes > 127")


def check_eof(data: bytes, r: Report) -> None:
    ends = revision_ends(data)
    if not ends:
        r.fail("6.1.3", "no %%EOF marker")
        return
    if ends[-1][1] != len(data):
        r.fail("6.1.3", f"{len(data) - ends[-1][1]} bytes follow the last %%EOF and its EOL")


def check_qpdf(path: str, r: Report) -> None:
    try:
        p = subprocess.run(["qpdf", "--check", path], capture_output=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        r.fail("6.1.4", "qpdf --check did not finish in 60 s")
        return
    if p.returncode != 0:
        out = (p.stderr or p.stdout).decode("utf-8", "replace").strip().splitlines()
        detail = "; ".join(out[:3])[:400]
        r.fail("6.1.4", f"qpdf --check exits {p.returncode}: {detail}")


# ---------------------------------------------------------------------------------------------------------------
# Object-level scans


def check_trailer(pdf: pikepdf.Pdf, r: Report) -> None:
    trailer = pdf.trailer
    ident = get(trailer, "ID")
    if not isinstance(ident, Array) or len(ident) != 2:
        r.fail("6.1.3", "the trailer has no /ID array of two strings")
    if get(trailer, "Encrypt") is not None or pdf.is_encrypted:
        r.fail("6.1.3", "the trailer has /Encrypt (the file is encrypted)")


def all_objects(pdf: pikepdf.Pdf):
    """Every dictionary and stream of the current revision: the indirect ones and those nested in them."""
    for top in pdf.objects:
        stack = [top]
        while stack:
            obj = stack.pop()
            if isinstance(obj, (Dictionary, Stream)):
                yield obj
                items = [obj[k] for k in obj.keys()]
            elif isinstance(obj, Array):
                items = list(obj)
            else:
                continue
            # Indirect children are visited as objects of their own.
            stack.extend(v for v in items if isinstance(v, (Dictionary, Stream, Array)) and not v.is_indirect)


def check_streams(pdf: pikepdf.Pdf, r: Report) -> None:
    for obj in all_objects(pdf):
        if not isinstance(obj, Stream):
            continue
        for key in ("F", "FFilter", "FDecodeParms"):
            if get(obj, key) is not None:
                r.fail("6.1.7.1", f"stream {describe(obj)} has /{key}")


def check_filters(pdf: pikepdf.Pdf, r: Report) -> None:
    for obj in all_objects(pdf):
        if not isinstance(obj, Stream):
            continue
        for f in filters_of(obj):
            if f in ("LZWDecode", "LZW", "Crypt"):
                r.fail("6.1.7.2", f"stream {describe(obj)} uses the {f} filter")


def check_xobjects(pdf: pikepdf.Pdf, r: Report) -> None:
    for obj in all_objects(pdf):
        if not isinstance(obj, Stream):
            continue
        sub = name_of(get(obj, "Subtype"))
        if sub == "Form":
            for key in ("Ref", "OPI", "PS"):
                if get(obj, key) is not None:
                    r.fail("6.2.9", f"form XObject {describe(obj)} has /{key}")
            if name_of(get(obj, "Subtype2")) == "PS":
                r.fail("6.2.9", f"form XObject {describe(obj)} has /Subtype2 /PS")
        elif sub == "PS":
            r.fail("6.2.9", f"PostScript XObject {describe(obj)}")


def check_images(pdf: pikepdf.Pdf, r: Report) -> None:
    for obj in all_objects(pdf):
        if not isinstance(obj, Stream) or name_of(get(obj, "Subtype")) != "Image":
            continue
        for key in ("OPI", "Alternates"):
            if get(obj, key) is not None:
                r.fail("6.2.8", f"image {describe(obj)} has /{key}")
        if get(obj, "Interpolate") is True or bool(get(obj, "Interpolate")):
            r.fail("6.2.8", f"image {describe(obj)} has /Interpolate true")


def check_actions(pdf: pikepdf.Pdf, r: Report) -> None:
    for obj in all_objects(pdf):
        s = name_of(get(obj, "S"))
        if s is None:
            continue
        typ = name_of(get(obj, "Type"))
        if typ not in (None, "Action"):
            continue
        if s in FORBIDDEN_ACTIONS:
            r.fail("6.5.1", f"{s} action in {describe(obj)}")
        elif s == "Named" and name_of(get(obj, "N")) not in ALLOWED_NAMED:
            r.fail("6.5.1", f"named action {get(obj, 'N')} in {describe(obj)}")
    names = get(pdf.Root, "Names")
    if get(names, "JavaScript") is not None:
        r.fail("6.5.1", "the catalog's name dictionary has a /JavaScript name tree")
    opn = get(pdf.Root, "OpenAction")
    if isinstance(opn, Dictionary) and name_of(get(opn, "S")) in FORBIDDEN_ACTIONS:
        r.fail("6.5.1", f"/OpenAction is a {name_of(get(opn, 'S'))} action")


def check_aa(pdf: pikepdf.Pdf, r: Report) -> None:
    if get(pdf.Root, "AA") is not None:
        r.fail("6.5.2", "the catalog has /AA")
    for i, page in enumerate(pdf.pages):
        if get(page.obj, "AA") is not None:
            r.fail("6.5.2", f"page {i + 1} has /AA")


def check_forms(pdf: pikepdf.Pdf, r: Report) -> None:
    acro = get(pdf.Root, "AcroForm")
    if acro is None:
        return
    if bool(get(acro, "NeedAppearances")):
        r.fail("6.4.1", "/AcroForm /NeedAppearances is true")
    if get(acro, "XFA") is not None:
        r.fail("6.4.1", "/AcroForm has /XFA")
    seen = set()
    stack = list(get(acro, "Fields") or [])
    while stack:
        f = stack.pop()
        if not isinstance(f, Dictionary) or objkey(f) in seen:
            continue
        seen.add(objkey(f))
        for key in ("A", "AA"):
            if get(f, key) is not None:
                r.fail("6.4.1", f"form field or widget {describe(f)} has /{key}")
        stack.extend(list(get(f, "Kids") or []))
    for page in pdf.pages:
        for annot in get(page.obj, "Annots") or []:
            if name_of(get(annot, "Subtype")) == "Widget":
                for key in ("A", "AA"):
                    if get(annot, key) is not None:
                        r.fail("6.4.1", f"widget {describe(annot)} has /{key}")


# ---------------------------------------------------------------------------------------------------------------
# Metadata


def xmp_prop(root: ET.Element, ns: str, local: str):
    """Value of an XMP property: str (simple), list[str] (Seq/Bag), dict[lang, str] (Alt), or None."""
    qname = "{" + NS[ns] + "}" + local
    for desc in root.iter("{" + NS["rdf"] + "}Description"):
        if qname in desc.attrib:
            return desc.attrib[qname]
        el = desc.find(qname)
        if el is None:
            continue
        for kind in ("Alt", "Seq", "Bag"):
            cont = el.find("{" + NS["rdf"] + "}" + kind)
            if cont is not None:
                lis = cont.findall("{" + NS["rdf"] + "}li")
                if kind == "Alt":
                    return {li.get(XML_LANG, "x-default"): (li.text or "") for li in lis}
                return [(li.text or "") for li in lis]
        return el.text or ""
    return None


def read_xmp(pdf: pikepdf.Pdf, r: Report) -> ET.Element | None:
    """Checks 6.6.2.1 and returns the parsed XMP root (None when absent or unreadable)."""
    md = get(pdf.Root, "Metadata")
    if not isinstance(md, Stream):
        r.fail("6.6.2.1", "the catalog has no /Metadata stream")
        return None
    if name_of(get(md, "Type")) != "Metadata" or name_of(get(md, "Subtype")) != "XML":
        r.fail("6.6.2.1", "the /Metadata stream lacks /Type /Metadata or /Subtype /XML")
    if filters_of(md):
        r.fail(
            "6.6.2.1",
            f"the catalog /Metadata stream is filtered ({', '.join(filters_of(md))}); this suite requires it "
            "unfiltered (PDF/A-1 6.7.2) so packet scanners read it",
        )
    raw = md.read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        r.fail("6.6.2.1", "the XMP packet is not UTF-8")
        return None
    head = re.search(rb"<\?xpacket\s+begin=[^?]*\?>", raw)
    if not head:
        r.fail("6.6.2.1", "no <?xpacket begin=...?> header")
    else:
        if re.search(rb"\sbytes=", head.group(0)):
            r.fail("6.6.2.1", "the xpacket header has a bytes attribute")
        if re.search(rb"\sencoding=", head.group(0)):
            r.fail("6.6.2.1", "the xpacket header has an encoding attribute")
        if not re.search(rb"<\?xpacket\s+end=['\"][rw]['\"]\s*\?>", raw):
            r.fail("6.6.2.1", "no <?xpacket end=...?> trailer")
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        r.fail("6.6.2.1", f"the XMP is not well-formed XML: {exc}")
        return None
    if root.find(".//{" + NS["rdf"] + "}RDF") is None and root.tag != "{" + NS["rdf"] + "}RDF":
        r.fail("6.6.2.1", "the XMP has no rdf:RDF element")
        return None
    return root


def check_pdfaid(root: ET.Element | None, r: Report) -> None:
    if root is None:
        return  # already reported under 6.6.2.1
    part = xmp_prop(root, "pdfaid", "part")
    conf = xmp_prop(root, "pdfaid", "conformance")
    if isinstance(part, str) and part.strip():
        try:
            r.declared = {"part": int(part.strip()), "conformance": conf.strip() if isinstance(conf, str) else ""}
        except ValueError:
            r.fail("6.6.4", f"pdfaid:part is not an integer: {part!r}")
    if r.declared is None:
        r.fail("6.6.4", "the XMP has no pdfaid:part (no PDF/A identification)")
        return
    if r.declared["part"] != 3:
        r.fail("6.6.4", f"pdfaid:part is {r.declared['part']}, not 3")
    if r.declared["conformance"] != "B":
        r.fail("6.6.4", f"pdfaid:conformance is {r.declared['conformance']!r}, not B")


DATE_RE = re.compile(
    r"^D?:?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?\s*"
    r"(?:(Z)(?:00'?(?:00'?)?)?|([+-])(\d{2})'?(?:(\d{2})'?)?)?\s*$"
)
XMP_DATE_RE = re.compile(
    r"^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?)?)?"
    r"(?:(Z)|([+-])(\d{2}):(\d{2}))?$"
)


def _instant(g: tuple) -> dt.datetime:
    y, mo, d, h, mi, s, z, sign, oh, om = g
    tz = None
    if z:
        tz = dt.timezone.utc
    elif sign:
        off = dt.timedelta(hours=int(oh), minutes=int(om or 0))
        tz = dt.timezone(off if sign == "+" else -off)
    return dt.datetime(int(y), int(mo or 1), int(d or 1), int(h or 0), int(mi or 0), int(s or 0), tzinfo=tz)


def pdf_date(s: str) -> dt.datetime | None:
    m = DATE_RE.match(s.strip())
    return _instant(m.groups()) if m else None


def xmp_date(s: str) -> dt.datetime | None:
    m = XMP_DATE_RE.match(s.strip())
    return _instant(m.groups()) if m else None


def same_instant(a: dt.datetime, b: dt.datetime) -> bool:
    if (a.tzinfo is None) != (b.tzinfo is None):
        return a.replace(tzinfo=None) == b.replace(tzinfo=None) and (a.utcoffset() or b.utcoffset()) in (
            None,
            dt.timedelta(0),
        )
    return a == b


INFO_MAP = [
    ("Title", "dc", "title", "alt"),
    ("Author", "dc", "creator", "seq"),
    ("Subject", "dc", "description", "alt"),
    ("Keywords", "pdf", "Keywords", "text"),
    ("Creator", "xmp", "CreatorTool", "text"),
    ("Producer", "pdf", "Producer", "text"),
    ("CreationDate", "xmp", "CreateDate", "date"),
    ("ModDate", "xmp", "ModifyDate", "date"),
]


def check_info_sync(pdf: pikepdf.Pdf, root: ET.Element | None, r: Report) -> None:
    info = get(pdf.trailer, "Info")
    if not isinstance(info, Dictionary):
        return
    if root is None:
        return  # the missing or unreadable XMP is reported under 6.6.2.1
    for key, ns, local, kind in INFO_MAP:
        v = get(info, key)
        if v is None:
            continue
        text = str(v)
        x = xmp_prop(root, ns, local)
        label = f"{ns}:{local}"
        if x is None:
            r.fail("6.1.5", f"Info /{key} is set but XMP {label} is missing")
            continue
        if kind == "alt":
            xv = x.get("x-default") if isinstance(x, dict) else None
            if xv != text:
                r.fail("6.1.5", f"Info /{key} {text!r} differs from XMP {label} x-default {xv!r}")
        elif kind == "seq":
            if not (isinstance(x, list) and len(x) == 1 and x[0] == text):
                r.fail("6.1.5", f"Info /{key} {text!r} differs from XMP {label} {x!r} (one entry expected)")
        elif kind == "text":
            if x != text:
                r.fail("6.1.5", f"Info /{key} {text!r} differs from XMP {label} {x!r}")
        else:
            a = pdf_date(text)
            b = xmp_date(x) if isinstance(x, str) else None
            if a is None or b is None:
                r.fail("6.1.5", f"Info /{key} {text!r} or XMP {label} {x!r} is not a valid date")
            elif not same_instant(a, b):
                r.fail("6.1.5", f"Info /{key} {text!r} and XMP {label} {x!r} are different instants")


# ---------------------------------------------------------------------------------------------------------------
# Output intent


def check_output_intents(pdf: pikepdf.Pdf, r: Report) -> str | None:
    """Checks 6.2.3; returns the PDF/A intent's colour space ('RGB', 'GRAY', 'CMYK') or None."""
    intents = get(pdf.Root, "OutputIntents")
    if not isinstance(intents, Array) or len(intents) == 0:
        r.fail("6.2.3", "the catalog has no /OutputIntents")
        return None
    profiles = {}
    space = None
    found = False
    for oi in intents:
        prof = get(oi, "DestOutputProfile")
        if get(oi, "DestOutputProfileRef") is not None:
            r.fail("6.2.3", "an OutputIntent has /DestOutputProfileRef")
        if prof is not None:
            profiles[objkey(prof)] = prof
        if name_of(get(oi, "S")) != "GTS_PDFA1":
            continue
        found = True
        if not isinstance(prof, Stream):
            r.fail("6.2.3", "the GTS_PDFA1 OutputIntent has no DestOutputProfile ICC stream")
            continue
        head = prof.read_bytes()[:128]
        if len(head) < 128 or head[36:40] != b"acsp":
            r.fail("6.2.3", "the DestOutputProfile is not an ICC profile (no 'acsp' signature)")
            continue
        cls = head[12:16]
        cs = ICC_SPACES.get(head[16:20])
        if cls not in (b"prtr", b"mntr"):
            r.fail("6.2.3", f"the DestOutputProfile's device class is {cls!r}, not prtr or mntr")
        if head[8] >= 5:
            r.fail("6.2.3", f"the DestOutputProfile's ICC version is {head[8]}, not below 5")
        if cs is None:
            r.fail("6.2.3", f"the DestOutputProfile's colour space is {head[16:20]!r}, not RGB, GRAY or CMYK")
            continue
        n = get(prof, "N")
        if n is None or int(n) != cs[1]:
            r.fail("6.2.3", f"the DestOutputProfile's /N is {n}, but its header says {cs[0]} ({cs[1]} components)")
        space = space or cs[0]
    if not found:
        r.fail("6.2.3", "no OutputIntent has /S /GTS_PDFA1")
    if len(profiles) > 1:
        r.fail("6.2.3", f"{len(profiles)} different DestOutputProfile objects among the OutputIntents")
    return space


# ---------------------------------------------------------------------------------------------------------------
# Content: device colours, transparency and fonts


class ContentWalker:
    """Walks pages, form XObjects, tiling patterns and annotation appearances, recording device colour use, fonts
    and transparency per page."""

    def __init__(self, pdf: pikepdf.Pdf, r: Report) -> None:
        self.pdf = pdf
        self.r = r
        self.device_uses: list[tuple[str, str]] = []  # (family, where)
        self.fonts: dict = {}  # objkey -> (font, where)
        self.transparency: dict[int, str] = {}  # page index -> reason
        self.seen_streams: set = set()

    # -- resources

    @staticmethod
    def defaults(res) -> set[str]:
        cs = get(res, "ColorSpace")
        out = set()
        pairs = (("DeviceRGB", "DefaultRGB"), ("DeviceCMYK", "DefaultCMYK"), ("DeviceGray", "DefaultGray"))
        for fam, key in pairs:
            if get(cs, key) is not None:
                out.add(fam)
        return out

    def use(self, family: str | None, res, where: str) -> None:
        if family and family not in self.defaults(res):
            self.device_uses.append((family, where))

    def families(self, cs, res, depth: int = 0) -> list[str]:
        """Device families a colour space value uses (a name, a resource name or an array)."""
        if depth > 8 or cs is None:
            return []
        if isinstance(cs, Name):
            n = name_of(cs)
            if n in DEVICE_ALIASES:
                return [DEVICE_ALIASES[n]]
            if n == "Pattern":
                return []
            named = get(get(res, "ColorSpace"), n)
            return self.families(named, res, depth + 1) if named is not None else []
        if isinstance(cs, Array) and len(cs) > 0:
            fam = name_of(cs[0])
            if fam in ("Indexed", "I") and len(cs) > 1:
                return self.families(cs[1], res, depth + 1)
            if fam in ("Separation", "DeviceN") and len(cs) > 2:
                return self.families(cs[2], res, depth + 1)
            if fam == "Pattern" and len(cs) > 1:
                return self.families(cs[1], res, depth + 1)
            if fam in DEVICE_ALIASES:
                return [DEVICE_ALIASES[fam]]
        return []

    # -- transparency

    def gstate(self, gs, page: int | None, where: str) -> None:
        if gs is None:
            return
        bm = get(gs, "BM")
        bms = [name_of(x) for x in bm] if isinstance(bm, Array) else [name_of(bm)] if bm is not None else []
        for b in bms:
            if b not in BLEND_MODES:
                self.r.fail("6.2.10", f"blend mode {b} in {where} is not an ISO 32000-1 one")
        reason = None
        smask = get(gs, "SMask")
        if smask is not None and name_of(smask) != "None":
            reason = "an ExtGState soft mask"
        elif any(b not in ("Normal", "Compatible") for b in bms):
            reason = f"blend mode {bms}"
        else:
            for key in ("CA", "ca"):
                v = get(gs, key)
                if v is not None and float(v) < 1:
                    reason = f"/{key} {float(v)}"
        if reason and page is not None:
            self.transparency.setdefault(page, f"{reason} in {where}")

    # -- fonts

    def add_fonts(self, res, where: str) -> None:
        fonts = get(res, "Font")
        if not isinstance(fonts, Dictionary):
            return
        for key in fonts.keys():
            font = fonts[key]
            if isinstance(font, Dictionary):
                self.fonts.setdefault(objkey(font), (font, f"{key} in {where}"))
                if name_of(get(font, "Subtype")) == "Type3":
                    self.add_fonts(get(font, "Resources"), f"Type3 font {key} in {where}")

    # -- content

    def walk(self, content, res, page: int | None, where: str) -> None:
        """content: a pikepdf Page or a content stream; res: its resource dictionary."""
        if isinstance(content, Stream):
            k = (objkey(content), page)
            if k in self.seen_streams:
                return
            self.seen_streams.add(k)
        self.add_fonts(res, where)
        try:
            instructions = pikepdf.parse_content_stream(content)
        except pikepdf.PdfError as exc:
            self.r.fail("6.2.4.3", f"content of {where} cannot be parsed: {exc}")
            return
        for ins in instructions:
            if isinstance(ins, pikepdf.ContentStreamInlineImage):
                self.inline_image(ins, res, where)
                continue
            op = ins.operator.unparse().decode("latin-1")
            ops = ins.operands
            if op in ("rg", "RG"):
                self.use("DeviceRGB", res, f"{op} in {where}")
            elif op in ("k", "K"):
                self.use("DeviceCMYK", res, f"{op} in {where}")
            elif op in ("g", "G"):
                self.use("DeviceGray", res, f"{op} in {where}")
            elif op in ("cs", "CS") and ops:
                for fam in self.families(ops[0], res):
                    self.use(fam, res, f"{op} {ops[0]} in {where}")
            elif op in ("scn", "SCN") and ops and isinstance(ops[-1], Name):
                self.pattern(get(get(res, "Pattern"), name_of(ops[-1])), res, page, where)
            elif op == "sh" and ops:
                sh = get(get(res, "Shading"), name_of(ops[0]) or "")
                for fam in self.families(get(sh, "ColorSpace"), res):
                    self.use(fam, res, f"shading {ops[0]} in {where}")
            elif op == "gs" and ops:
                self.gstate(get(get(res, "ExtGState"), name_of(ops[0]) or ""), page, f"{ops[0]} in {where}")
            elif op == "Do" and ops:
                self.xobject(get(get(res, "XObject"), name_of(ops[0]) or ""), res, page, f"{ops[0]} in {where}")

    def inline_image(self, ins, res, where: str) -> None:
        d = ins.iimage.obj
        cs = get(d, "CS") or get(d, "ColorSpace")
        if cs is not None and not bool(get(d, "IM") or get(d, "ImageMask")):
            for fam in self.families(cs, res):
                self.use(fam, res, f"inline image in {where}")

    def pattern(self, pat, res, page: int | None, where: str) -> None:
        if pat is None:
            return
        if int(get(pat, "PatternType") or 0) == 1 and isinstance(pat, Stream):
            self.walk(pat, get(pat, "Resources") or res, page, f"tiling pattern in {where}")
        elif int(get(pat, "PatternType") or 0) == 2:
            for fam in self.families(get(get(pat, "Shading"), "ColorSpace"), res):
                self.use(fam, res, f"shading pattern in {where}")
            self.gstate(get(pat, "ExtGState"), page, f"shading pattern in {where}")

    def xobject(self, xo, res, page: int | None, where: str) -> None:
        if not isinstance(xo, Stream):
            return
        sub = name_of(get(xo, "Subtype"))
        if sub == "Image":
            if not bool(get(xo, "ImageMask")):
                for fam in self.families(get(xo, "ColorSpace"), res):
                    self.use(fam, res, f"image {where}")
            smask = get(xo, "SMask")
            if smask is not None and page is not None:
                self.transparency.setdefault(page, f"image soft mask {where}")
        elif sub == "Form":
            group = get(xo, "Group")
            if group is not None:
                for fam in self.families(get(group, "CS"), res):
                    self.use(fam, res, f"transparency group of form {where}")
            self.walk(xo, get(xo, "Resources") or res, page, f"form {where}")

    def appearance(self, ap_entry, page: int, where: str) -> None:
        if isinstance(ap_entry, Stream):
            self.walk(ap_entry, get(ap_entry, "Resources") or Dictionary(), page, where)
        elif isinstance(ap_entry, Dictionary):
            for k in ap_entry.keys():
                self.appearance(ap_entry[k], page, f"{where} state {k}")

    def run(self) -> None:
        for i, page in enumerate(self.pdf.pages):
            res = inherited(page.obj, "Resources") or Dictionary()
            where = f"page {i + 1}"
            self.walk(page, res, i, where)
            group = get(page.obj, "Group")
            if group is not None:
                for fam in self.families(get(group, "CS"), res):
                    self.use(fam, res, f"page group of {where}")
            for j, annot in enumerate(get(page.obj, "Annots") or []):
                ap = get(annot, "AP")
                if isinstance(ap, Dictionary):
                    for k in ap.keys():
                        self.appearance(ap[k], i, f"annotation {j + 1} {k} appearance on {where}")


def inherited(page, key: str):
    node = page
    for _ in range(64):
        if node is None:
            return None
        v = get(node, key)
        if v is not None:
            return v
        node = get(node, "Parent")
    return None


def check_device_colours(w: ContentWalker, space: str | None, r: Report) -> None:
    allowed = {"RGB": {"DeviceRGB", "DeviceGray"}, "CMYK": {"DeviceCMYK", "DeviceGray"}, "GRAY": {"DeviceGray"}}
    ok = allowed.get(space or "", set())
    reported = set()
    for fam, where in w.device_uses:
        if fam in ok or (fam, where) in reported:
            continue
        reported.add((fam, where))
        intent = f"a {space} output intent" if space else "no PDF/A output intent"
        r.fail("6.2.4.3", f"{fam} used ({where}) with {intent} and no Default colour space")


def check_transparency(pdf: pikepdf.Pdf, w: ContentWalker, space: str | None, r: Report) -> None:
    for page, reason in sorted(w.transparency.items()):
        group = get(pdf.pages[page].obj, "Group")
        if space is None and get(group, "CS") is None:
            r.fail(
                "6.2.10", f"page {page + 1} uses transparency ({reason}) without an output intent or page group /CS"
            )


def font_embedded(font) -> bool:
    sub = name_of(get(font, "Subtype"))
    if sub == "Type3":
        return True
    if sub == "Type0":
        desc = get(font, "DescendantFonts")
        if not isinstance(desc, Array) or len(desc) == 0:
            return False
        font = desc[0]
    fd = get(font, "FontDescriptor")
    return any(isinstance(get(fd, k), Stream) for k in ("FontFile", "FontFile2", "FontFile3"))


def check_fonts(w: ContentWalker, r: Report) -> None:
    for font, where in w.fonts.values():
        if not font_embedded(font):
            r.fail("6.2.11.4.1", f"font {get(font, 'BaseFont')} ({where}) is not embedded")


# ---------------------------------------------------------------------------------------------------------------
# Annotations


def zero_area(rect) -> bool:
    try:
        x1, y1, x2, y2 = (float(v) for v in rect)
    except Exception:  # noqa: BLE001
        return False
    return x1 == x2 or y1 == y2


def check_annotations(pdf: pikepdf.Pdf, r: Report) -> None:
    for i, page in enumerate(pdf.pages):
        for j, annot in enumerate(get(page.obj, "Annots") or []):
            sub = name_of(get(annot, "Subtype"))
            where = f"{sub} annotation {j + 1} on page {i + 1}"
            if sub == "Popup":
                continue
            f = get(annot, "F")
            flags = int(f) if f is not None else None
            if flags is None:
                r.fail("6.3.2", f"{where} has no /F")
            elif not flags & 4 or flags & (1 | 2 | 32 | 256):
                r.fail(
                    "6.3.2", f"{where} has /F {flags}: Print must be set, Invisible/Hidden/NoView/ToggleNoView clear"
                )
            ap = get(annot, "AP")
            if ap is not None:
                extra = [str(k) for k in ap.keys() if str(k) != "/N"]
                if extra:
                    r.fail("6.3.3", f"{where} /AP has {', '.join(extra)} besides /N")
            if sub == "Link" or zero_area(get(annot, "Rect") or []):
                continue
            if get(ap, "N") is None:
                r.fail("6.3.3", f"{where} has no /AP with /N")


# ---------------------------------------------------------------------------------------------------------------
# Associated files (PDF/A-3 6.8)


def name_tree_values(node, depth: int = 0):
    if node is None or depth > 32:
        return
    names = get(node, "Names")
    if isinstance(names, Array):
        for k in range(1, len(names), 2):
            yield str(names[k - 1]), names[k]
    for kid in get(node, "Kids") or []:
        yield from name_tree_values(kid, depth + 1)


MIME_RE = re.compile(r"^[-\w+.]+/[-\w+.]+$")


def check_associated_files(pdf: pikepdf.Pdf, r: Report) -> None:
    af_members = set()
    for obj in all_objects(pdf):
        af = get(obj, "AF")
        if isinstance(af, Array):
            for spec in af:
                if isinstance(spec, Dictionary) and spec.is_indirect:
                    af_members.add(spec.objgen)
    specs = []
    ef_tree = get(get(pdf.Root, "Names"), "EmbeddedFiles")
    for key, spec in name_tree_values(ef_tree):
        specs.append((spec, f"embedded file {key!r}"))
    for i, page in enumerate(pdf.pages):
        for annot in get(page.obj, "Annots") or []:
            if name_of(get(annot, "Subtype")) == "FileAttachment" and get(get(annot, "FS"), "EF") is not None:
                specs.append((get(annot, "FS"), f"file attachment annotation on page {i + 1}"))
    for spec, where in specs:
        if not isinstance(spec, Dictionary):
            r.fail("6.8", f"{where}: the file specification is not a dictionary")
            continue
        if not spec.is_indirect or spec.objgen not in af_members:
            r.fail("6.8", f"{where} is not in any /AF array (catalog, page, annotation or other object)")
        if name_of(get(spec, "AFRelationship")) is None:
            r.fail("6.8", f"{where} has no /AFRelationship name")
        for key in ("F", "UF"):
            if get(spec, key) is None:
                r.fail("6.8", f"{where} has no /{key}")
        ef = get(get(spec, "EF"), "F")
        if not isinstance(ef, Stream):
            r.fail("6.8", f"{where} has no /EF /F embedded file stream")
            continue
        mime = name_of(get(ef, "Subtype"))
        if mime is None or not MIME_RE.match(mime):
            r.fail("6.8", f"{where}: the embedded file stream's /Subtype (MIME type) is {get(ef, 'Subtype')}")
        if get(get(ef, "Params"), "ModDate") is None:
            r.fail("6.8", f"{where}: the embedded file stream has no /Params /ModDate")


# ---------------------------------------------------------------------------------------------------------------
# Signatures and permissions


def signature_dicts(pdf: pikepdf.Pdf):
    for obj in all_objects(pdf):
        if isinstance(obj, Dictionary) and get(obj, "ByteRange") is not None and get(obj, "Contents") is not None:
            yield obj


def check_signatures(pdf: pikepdf.Pdf, data: bytes, r: Report) -> dict:
    """Checks 6.4.3; returns {objgen: covered end} for signatures whose ByteRange is sound."""
    ends = revision_ends(data)
    covered = {}
    for sig in signature_dicts(pdf):
        where = f"signature {describe(sig)}"
        br = get(sig, "ByteRange")
        try:
            vals = [int(v) for v in br]
        except Exception:  # noqa: BLE001
            vals = []
        if len(vals) != 4 or not all(isinstance(v, int) for v in vals):
            r.fail("6.4.3", f"{where}: /ByteRange is not 4 integers")
            continue
        a, b, c, d = vals
        if a != 0 or b <= 0 or c <= b or d < 0 or c + d > len(data):
            r.fail("6.4.3", f"{where}: /ByteRange {vals} is not [0 b c d] inside the file ({len(data)} bytes)")
            continue
        gap = data[b:c]
        contents = bytes(get(sig, "Contents"))
        m = re.fullmatch(rb"<([0-9A-Fa-f\s]*)>", gap)
        if not m or bytes.fromhex(re.sub(rb"\s", b"", m.group(1)).decode()) != contents:
            inner = data[b - 1 : b] == b"<" and data[c : c + 1] == b">"
            why = " (it leaves the angle brackets inside the signed ranges)" if inner else ""
            r.fail("6.4.3", f"{where}: the ByteRange gap [{b}, {c}) is not exactly the /Contents hex string{why}")
            continue
        end = c + d
        rev = next(((e0, e1) for e0, e1 in ends if e0 >= c), None)
        if rev is None or end not in rev:
            r.fail("6.4.3", f"{where}: the signed ranges end at byte {end}, not at the end of its revision {rev}")
            continue
        covered[sig.objgen] = end
        if end < len(data):
            r.note("6.4.3", f"{where} covers bytes up to {end}; {len(data) - end} bytes of later updates follow")
    return covered


def check_perms(pdf: pikepdf.Pdf, data: bytes, covered: dict, r: Report) -> None:
    perms = get(pdf.Root, "Perms")
    if perms is None:
        return
    for k in perms.keys():
        if str(k) not in ("/UR3", "/DocMDP"):
            r.fail("6.1.12", f"/Perms has {k}")
    sig = get(perms, "DocMDP")
    if sig is None:
        return
    p = 2
    for ref in get(sig, "Reference") or []:
        if name_of(get(ref, "TransformMethod")) == "DocMDP":
            p = int(get(get(ref, "TransformParams"), "P") or 2)
    end = covered.get(sig.objgen) if sig.is_indirect else None
    if p == 1 and end is not None and end < len(data):
        r.fail(
            "6.1.12",
            f"a DocMDP /P 1 certification (no changes allowed) is followed by {len(data) - end} bytes of updates",
        )


# ---------------------------------------------------------------------------------------------------------------


def check(path: str) -> Report:
    r = Report()
    with open(path, "rb") as fh:
        data = fh.read()
    r.run("6.1.2", check_header, data, r)
    r.run("6.1.3", check_eof, data, r)
    r.run("6.1.4", check_qpdf, path, r)
    try:
        pdf = pikepdf.Pdf.open(path)
    except pikepdf.PasswordError:
        r.fail("6.1.3", "the file is encrypted with a user password (/Encrypt)")
        return r
    except Exception as exc:  # noqa: BLE001 - a file pikepdf cannot open is not PDF/A
        r.fail("6.1.4", f"pikepdf cannot open the file: {type(exc).__name__}: {exc}")
        return r
    with pdf:
        r.run("6.1.3", check_trailer, pdf, r)
        r.checked.append("6.6.2.1")
        try:
            root = read_xmp(pdf, r)
        except Exception as exc:  # noqa: BLE001
            r.fail("6.6.2.1", f"could not be checked: {type(exc).__name__}: {exc}")
            root = None
        r.run("6.6.4", check_pdfaid, root, r)
        r.run("6.1.5", check_info_sync, pdf, root, r)
        r.run("6.1.7.1", check_streams, pdf, r)
        r.run("6.1.7.2", check_filters, pdf, r)
        r.checked.append("6.2.3")
        try:
            space = check_output_intents(pdf, r)
        except Exception as exc:  # noqa: BLE001
            r.fail("6.2.3", f"could not be checked: {type(exc).__name__}: {exc}")
            space = None
        walker = ContentWalker(pdf, r)
        r.checked.extend(["6.2.4.3", "6.2.10", "6.2.11.4.1"])
        try:
            walker.run()
            check_device_colours(walker, space, r)
            check_transparency(pdf, walker, space, r)
            check_fonts(walker, r)
        except Exception as exc:  # noqa: BLE001
            for clause in ("6.2.4.3", "6.2.10", "6.2.11.4.1"):
                r.fail(clause, f"could not be checked: {type(exc).__name__}: {exc}")
        r.run("6.2.8", check_images, pdf, r)
        r.run("6.2.9", check_xobjects, pdf, r)
        r.checked.append("6.3.3")
        r.run("6.3.2", check_annotations, pdf, r)
        r.run("6.4.1", check_forms, pdf, r)
        r.checked.append("6.4.3")
        covered: dict = {}
        try:
            covered = check_signatures(pdf, data, r)
        except Exception as exc:  # noqa: BLE001
            r.fail("6.4.3", f"could not be checked: {type(exc).__name__}: {exc}")
        r.run("6.1.12", check_perms, pdf, data, covered, r)
        r.run("6.5.1", check_actions, pdf, r)
        r.run("6.5.2", check_aa, pdf, r)
        r.run("6.8", check_associated_files, pdf, r)
    return r


def report(path: str) -> dict:
    try:
        r = check(path)
    except OSError as exc:
        r = Report()
        r.fail("6.1.2", f"the file cannot be read: {exc}")
    r.finish()
    order = list(CLAUSES)
    checked = sorted(set(r.checked), key=lambda c: order.index(c) if c in order else len(order))
    return {"declared": r.declared, "failures": r.failures, "notes": r.notes, "checked": checked}


def main(argv: list[str]) -> int:
    """One JSON report per path, one a line, in argument order."""
    if len(argv) < 2:
        print("usage: pdfa_check.py <file.pdf>...", file=sys.stderr)
        return 2
    for path in argv[1:]:
        json.dump(report(path), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
