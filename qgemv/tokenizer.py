"""Tokenizers built from GGUF metadata, giving llama.cpp's token ids.

Two families are supported, chosen by ``tokenizer.ggml.model``:

``"llama"``  SentencePiece-style: the text is escaped (``" "`` -> ``"▁"``, one space prefixed),
             then adjacent pieces are merged greedily by vocabulary score; characters that never
             form a token fall back to ``<0xNN>`` byte tokens.
``"gpt2"``   byte-level BPE: the text is split into words by the pre-tokenizer regexes named by
             ``tokenizer.ggml.pre``, each word is mapped byte by byte to GPT-2's printable
             alphabet, then merged by ``tokenizer.ggml.merges`` rank.

Design:

1. Every step follows llama.cpp's ``src/llama-vocab.cpp`` and ``src/unicode.cpp``: the same
   special-token partition, the same merge order (including ties), the same regex semantics.
   Where this module departs from llama.cpp it says so next to the code.
2. Pre-tokenizer regexes use ``\\p{L}``-style classes, which stdlib ``re`` lacks. Like llama.cpp,
   the text is first *collapsed*: ASCII stays, every other code point becomes one marker
   character for its Unicode category (letter, number, punctuation, mark, symbol, other) or
   ``\\v`` for whitespace; ``\\p{L}`` then becomes ``[<letter marker>A-Za-z]``. Matching the
   collapsed text with ``re`` gives the same word boundaries with no third-party dependency.
3. Categories come from ``unicodedata`` (the Unicode version of the running Python); whitespace
   is the Unicode ``White_Space`` property, as in llama.cpp's tables. Code points assigned in
   newer Unicode versions than Python's may be classed differently from llama.cpp.
4. Merges use a heap keyed like llama.cpp's priority queues, so long inputs cost
   O(n log n): a few KB encode in milliseconds. BPE results are cached per word.
5. Pure Python: no numpy, no compiled qgemv modules, no gguf-py. Metadata arrives as a mapping
   (string arrays as ``list[str]``, numeric arrays as sequences or numpy arrays).
"""

from __future__ import annotations

import codecs
import heapq
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Tokenizer", "StreamDecoder"]

_KEY = "tokenizer.ggml."


class _Attr:
    """Token attribute bits (llama.cpp's ``llama_token_attr``); plain ints, since IntFlag
    arithmetic is too slow over a 150k-token vocabulary."""

    UNDEFINED = 0
    UNKNOWN = 1 << 0
    UNUSED = 1 << 1
    NORMAL = 1 << 2
    CONTROL = 1 << 3
    USER_DEFINED = 1 << 4
    BYTE = 1 << 5


# tokenizer.ggml.token_type values (gguf's TokenType) -> attributes.
_TYPE_TO_ATTR = {
    0: _Attr.UNDEFINED,
    1: _Attr.NORMAL,
    2: _Attr.UNKNOWN,
    3: _Attr.CONTROL,
    4: _Attr.USER_DEFINED,
    5: _Attr.UNUSED,
    6: _Attr.BYTE,
}

# Tokens matched as whole units before tokenization (llama.cpp's cache_special_tokens).
_SPECIAL = _Attr.CONTROL | _Attr.USER_DEFINED | _Attr.UNKNOWN
# Tokens rendered as nothing unless special rendering is asked for.
_HIDDEN = _Attr.CONTROL | _Attr.UNKNOWN

_SPACE_ESCAPE = "\u2581"  # "▁": SentencePiece's visible space

# Token texts that llama.cpp recognises as end-of-turn / end-of-generation markers.
_EOT_TEXTS = (
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "[EOT]", "<\uff5cend\u2581of\u2581sentence\uff5c>", "<end_of_utterance>",
)
_EOM_TEXTS = ("<|eom_id|>",)
_FIM_PAD_TEXTS = ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]")
_FIM_REP_TEXTS = ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>")
_FIM_SEP_TEXTS = ("<|file_sep|>",)
_EOG_TEXTS = (
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~[",
)
# gpt-oss chat markers that llama.cpp always renders (it retypes them as user-defined).
_ALWAYS_RENDERED = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")


# ---------------------------------------------------------------------------------------------
# Unicode classification and the collapsed-text regex engine
# ---------------------------------------------------------------------------------------------

# Unicode White_Space property (PropList.txt), the set llama.cpp's \s stands for.
_WHITESPACE = frozenset(
    chr(c)
    for c in (*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
              0x2028, 0x2029, 0x202F, 0x205F, 0x3000)
)

# One marker character per category, and the ASCII members of each \p{..} class: llama.cpp's
# k_ucat_cpt and k_ucat_map (note '~' is absent from its symbol class; kept for fidelity).
_MARKERS = {"N": "\xd1", "L": "\xd2", "P": "\xd3", "M": "\xd4", "S": "\xd5"}
_OTHER_MARKER = "\xd0"
_ASCII_MEMBERS = {
    "N": "0123456789",
    "L": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "P": "!\"#%&'()*,-./:;?@[\\]_{}",
    "M": "",
    "S": "$+<=>^`|",
}
_PROPERTY = re.compile(r"\\p\{(L|Lu|Ll|Lt|Lm|Lo|N|P|M|S)\}")

_collapsed_chars: dict[str, str] = {}


def _collapse_char(ch: str) -> str:
    """Marker for one non-ASCII code point (memoised: texts reuse few distinct characters)."""
    marker = _collapsed_chars.get(ch)
    if marker is None:
        if ch in _WHITESPACE:
            marker = "\x0b"  # llama.cpp: non-ASCII whitespace becomes \v so that \s matches it
        else:
            marker = _MARKERS.get(unicodedata.category(ch)[0], _OTHER_MARKER)
        _collapsed_chars[ch] = marker
    return marker


def _collapse(text: str) -> str:
    """Text with each non-ASCII code point replaced by its category marker (same length)."""
    if text.isascii():
        return text
    return "".join(ch if ch < "\x80" else _collapse_char(ch) for ch in text)


def _blank_whitespace(text: str) -> str:
    """Text with non-ASCII whitespace replaced by \\v, for patterns without \\p{..} classes."""
    if text.isascii():
        return text
    return "".join("\x0b" if ch >= "\x80" and ch in _WHITESPACE else ch for ch in text)


def _class_body(category: str) -> str:
    """Inside of a character class matching one category in collapsed text."""
    members = _MARKERS[category] + _ASCII_MEMBERS[category]
    return "".join(f"\\x{ord(c):02x}" for c in members)


def _collapse_pattern(pattern: str) -> str:
    """Rewrite ``\\p{X}`` into classes over collapsed text (llama.cpp's regex_expr_collapsed)."""
    out = []
    inside = False  # within [...]: insert the class body without brackets
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "[" and (i == 0 or pattern[i - 1] != "\\"):
            inside = True
        elif inside and ch == "]" and pattern[i - 1] != "\\":
            inside = False
        else:
            prop = _PROPERTY.match(pattern, i)
            if prop:
                body = _class_body(prop.group(1)[0])
                out.append(body if inside else f"[{body}]")
                i = prop.end()
                continue
        out.append(ch)
        i += 1
    return "".join(out)


class _RegexSplitter:
    """Split text into words with a cascade of regexes (llama.cpp's unicode_regex_split).

    Each regex splits every piece left by the previous one into its matches and the gaps
    between them; both are kept, so the pieces always cover the whole text.
    """

    def __init__(self, patterns: Sequence[str]):
        self._steps = []
        for pattern in patterns:
            on_categories = _PROPERTY.search(pattern) is not None
            source = _collapse_pattern(pattern) if on_categories else pattern
            # re.ASCII: \s is then C's isspace set, as for std::regex on collapsed bytes
            self._steps.append((re.compile(source, re.ASCII), on_categories))

    def split(self, text: str) -> list[str]:
        views = {}
        bounds = [(0, len(text))]
        for regex, on_categories in self._steps:
            if on_categories not in views:
                views[on_categories] = (_collapse if on_categories else _blank_whitespace)(text)
            view = views[on_categories]
            bounds = [piece for start, end in bounds
                      for piece in self._split_span(regex, view, start, end)]
        return [text[start:end] for start, end in bounds]

    @staticmethod
    def _split_span(regex: re.Pattern, view: str, start: int, end: int) -> list[tuple[int, int]]:
        pieces = []
        prev = start
        # endpos makes the span behave as the whole string, so (?!\S) sees its end
        for match in regex.finditer(view, start, end):
            if match.start() > prev:
                pieces.append((prev, match.start()))
            pieces.append(match.span())
            prev = match.end()
        if prev < end:
            pieces.append((prev, end))
        return pieces


# ---------------------------------------------------------------------------------------------
# Pre-tokenizers (llama.cpp's LLAMA_VOCAB_PRE_TYPE_* regex lists)
# ---------------------------------------------------------------------------------------------

_RE_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
_RE_LLAMA3 = (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"
              r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_RE_QWEN2 = (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"
             r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


@dataclass(frozen=True)
class _PreTokenizer:
    """How a byte-level BPE vocabulary splits text before merging."""

    patterns: tuple[str, ...]
    ignore_merges: bool = False  # a word that is itself a token is not merged (Llama 3)
    add_bos: bool = False        # default for tokenizer.ggml.add_bos_token
    clean_spaces: bool = True    # llama.cpp's detokenizer cleanup default


_DEFAULT = _PreTokenizer((r"[\p{P}\$\+<=>\^~\|]+", _RE_GPT2, r"\p{N}+", "[0-9][0-9][0-9]"))
_GPT2 = _PreTokenizer((_RE_GPT2,))
_LLAMA3 = _PreTokenizer((_RE_LLAMA3,), ignore_merges=True, add_bos=True)
_STARCODER = _PreTokenizer((r"\p{N}", _RE_GPT2))
_QWEN2 = _PreTokenizer((_RE_QWEN2,), clean_spaces=False)
_FALCON = _PreTokenizer((r"[\p{P}\$\+<=>\^~\|`]+", _RE_GPT2, "[0-9][0-9][0-9]"))
_BLOOM = _PreTokenizer((" ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+",))

# tokenizer.ggml.pre -> pre-tokenizer, for the names llama.cpp maps to these regex lists.
_PRE_TOKENIZERS = {
    "default": _DEFAULT,
    **dict.fromkeys(("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
                     "midm-2.0", "lfm2"), _LLAMA3),
    **dict.fromkeys(("dbrx", "smaug-bpe"), _PreTokenizer((_RE_LLAMA3,))),
    **dict.fromkeys(("gpt-2", "phi-2", "mpt", "olmo", "jais", "exaone4"), _GPT2),
    **dict.fromkeys(("starcoder", "refact", "codeshell", "exaone", "minerva-7b"), _STARCODER),
    **dict.fromkeys(("smollm", "command-r"),
                    _PreTokenizer(_STARCODER.patterns, clean_spaces=False)),
    **dict.fromkeys(("qwen2", "deepseek-r1-qwen", "hunyuan"), _QWEN2),
    **dict.fromkeys(("stablelm2", "megrez"), _PreTokenizer(_QWEN2.patterns)),
    "falcon": _FALCON,
    "bloom": _BLOOM,
    "gpt3-finnish": _BLOOM,
    "poro-chat": _PreTokenizer(_BLOOM.patterns, clean_spaces=False),
}


def _gpt2_byte_chars() -> list[str]:
    """GPT-2's byte -> printable character table: printable Latin-1 bytes map to themselves,
    the other 68 bytes to U+0100 onwards, in byte order."""
    printable = {*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)}
    chars = []
    n_shifted = 0
    for byte in range(256):
        if byte in printable:
            chars.append(chr(byte))
        else:
            chars.append(chr(0x100 + n_shifted))
            n_shifted += 1
    return chars


_BYTE_CHARS = _gpt2_byte_chars()
_LATIN1_TO_GPT2 = {byte: ch for byte, ch in enumerate(_BYTE_CHARS)}  # for str.translate
_GPT2_TO_BYTE = {ch: byte for byte, ch in enumerate(_BYTE_CHARS)}


# ---------------------------------------------------------------------------------------------
# The two tokenization algorithms
# ---------------------------------------------------------------------------------------------

class _Symbols:
    """A doubly linked list of text pieces that merge right-into-left (llm_symbol)."""

    def __init__(self, pieces: Sequence[str]):
        n = len(pieces)
        self.text = list(pieces)
        self.prev = list(range(-1, n - 1))
        self.next = [*range(1, n), -1] if n else []

    def merge(self, left: int, right: int) -> None:
        self.text[left] += self.text[right]
        self.text[right] = ""
        after = self.next[right]
        self.next[left] = after
        if after >= 0:
            self.prev[after] = left

    def remaining(self) -> list[str]:
        return [piece for piece in self.text if piece]


class _SpmModel:
    """SentencePiece-style merging by score (llama.cpp's llm_tokenizer_spm)."""

    def __init__(self, vocab: Mapping[str, int], scores: Sequence[float],
                 byte_ids: Sequence[int | None], unk_id: int | None):
        self._vocab = vocab
        self._scores = scores
        self._byte_ids = byte_ids
        self._unk_id = unk_id

    def tokenize(self, text: str) -> list[int]:
        symbols = _Symbols(text)
        heap: list[tuple[float, int, int, int]] = []
        for i in range(1, len(text)):
            self._push(heap, symbols, i - 1, i)
        while heap:
            _, left, right, size = heapq.heappop(heap)
            a, b = symbols.text[left], symbols.text[right]
            if not a or not b or len(a) + len(b) != size:
                continue  # stale: one side has merged since this pair was queued
            symbols.merge(left, right)
            if symbols.prev[left] >= 0:
                self._push(heap, symbols, symbols.prev[left], left)
            if symbols.next[left] >= 0:
                self._push(heap, symbols, left, symbols.next[left])
        ids: list[int] = []
        for piece in symbols.remaining():
            self._emit(piece, ids)
        return ids

    def _push(self, heap, symbols: _Symbols, left: int, right: int) -> None:
        text = symbols.text[left] + symbols.text[right]
        token = self._vocab.get(text)
        if token is not None:
            # highest score first, then leftmost (llm_bigram_spm::comparator)
            heapq.heappush(heap, (-self._scores[token], left, right, len(text)))

    def _emit(self, piece: str, ids: list[int]) -> None:
        token = self._vocab.get(piece)
        if token is not None:
            ids.append(token)
            return
        # Every merge result is a token, so an unknown piece is one unmerged character:
        # llama.cpp's rev_merge lookup can never apply here and byte fallback follows.
        for byte in piece.encode("utf-8"):
            byte_id = self._byte_ids[byte]
            if byte_id is None:
                # llama.cpp throws here; <unk> keeps vocabularies without byte tokens usable
                byte_id = self._unk_id
            if byte_id is None:
                raise ValueError(f"cannot encode byte 0x{byte:02X}: the vocabulary has no "
                                 f"<0x{byte:02X}> token and no unknown token")
            ids.append(byte_id)


class _BpeModel:
    """Byte-level BPE merging by rank (llama.cpp's llm_tokenizer_bpe)."""

    _CACHE_LIMIT = 1 << 16

    def __init__(self, vocab: Mapping[str, int], merges: Sequence[str], pre: _PreTokenizer):
        self._vocab = vocab
        # "left right" -> rank; filled backwards so that the first occurrence of a pair wins,
        # as with llama.cpp's emplace
        self._ranks = dict(zip(reversed(merges), range(len(merges) - 1, -1, -1)))
        self._splitter = _RegexSplitter(pre.patterns)
        self._ignore_merges = pre.ignore_merges
        self._cache: dict[str, tuple[int, ...]] = {}

    def tokenize(self, text: str) -> list[int]:
        ids: list[int] = []
        for word in self._splitter.split(text):
            encoded = word.encode("utf-8").decode("latin-1").translate(_LATIN1_TO_GPT2)
            cached = self._cache.get(encoded)
            if cached is None:
                cached = self._word_ids(encoded)
                if len(self._cache) >= self._CACHE_LIMIT:
                    self._cache.clear()
                self._cache[encoded] = cached
            ids.extend(cached)
        return ids

    def _word_ids(self, word: str) -> tuple[int, ...]:
        if self._ignore_merges and word in self._vocab:
            return (self._vocab[word],)
        ids = []
        for piece in self._merge(word):
            token = self._vocab.get(piece)
            if token is not None:
                ids.append(token)
                continue
            # llama.cpp looks each UTF-8 byte of the piece up as a one-byte token: only ASCII
            # bytes can match, the rest are dropped
            ids.extend(self._vocab[ch] for ch in piece if ch < "\x80" and ch in self._vocab)
        return tuple(ids)

    def _merge(self, word: str) -> list[str]:
        symbols = _Symbols(word)
        heap: list[tuple[int, int, int, str]] = []
        for i in range(1, len(word)):
            self._push(heap, symbols, i - 1, i)
        while heap:
            _, left, right, text = heapq.heappop(heap)
            a, b = symbols.text[left], symbols.text[right]
            if not a or not b or a + b != text:
                continue  # stale: one side has merged since this pair was queued
            symbols.merge(left, right)
            if symbols.prev[left] >= 0:
                self._push(heap, symbols, symbols.prev[left], left)
            if symbols.next[left] >= 0:
                self._push(heap, symbols, left, symbols.next[left])
        return symbols.remaining()

    def _push(self, heap, symbols: _Symbols, left: int, right: int) -> None:
        a, b = symbols.text[left], symbols.text[right]
        rank = self._ranks.get(f"{a} {b}")
        if rank is not None:
            # lowest rank first, then leftmost (llm_bigram_bpe::comparator)
            heapq.heappush(heap, (rank, left, right, a + b))


# ---------------------------------------------------------------------------------------------
# Metadata helpers
# ---------------------------------------------------------------------------------------------

def _as_list(values) -> list:
    """A metadata array (list, tuple or numpy array) as a Python list."""
    return values.tolist() if hasattr(values, "tolist") else list(values)


def _special_id(metadata: Mapping[str, object], name: str, default: int | None,
                n_vocab: int) -> int | None:
    """``tokenizer.ggml.<name>_token_id``, else the default; ids outside the vocabulary are
    ignored as llama.cpp does."""
    if default is not None and not 0 <= default < n_vocab:
        default = None
    value = metadata.get(f"{_KEY}{name}_token_id")
    if value is None or not 0 <= int(value) < n_vocab:
        return default
    return int(value)


def _find_text(vocab: Mapping[str, int], texts: Iterable[str]) -> int | None:
    """Id of the first of ``texts`` present in the vocabulary."""
    for text in texts:
        if text in vocab:
            return vocab[text]
    return None


def _clean_spaces(text: str) -> str:
    """llama.cpp's detokenizer cleanup: " ," -> ",", " ' " -> "'", " 's" -> "'s", ...

    The three passes mirror llama_vocab::impl::detokenize, including its in-place quirk of
    hiding the space after a removed " ' " from the pass's look-behind.
    """
    # pass 1: no space before ? ! . ,
    out: list[str] = []
    for i, ch in enumerate(text):
        if i > 0 and text[i - 1] == " " and ch in "?!.,":
            out.pop()
        out.append(ch)
    # pass 2: " ' " -> "'"
    src, out = out, []
    i = 0
    while i < len(src):
        ch = src[i]
        if i > 0 and ch == "'" and i + 1 < len(src) and src[i - 1] == " " and src[i + 1] == " ":
            out.pop()
            src[i + 1] = "\0"  # the skipped space reads as NUL for the next look-behind
            out.append(ch)
            i += 2
            continue
        out.append(ch)
        i += 1
    src = out
    # pass 3: " 's", " 'm", " 're", " 've" -> no space
    out = []
    for i, ch in enumerate(src):
        if i > 0 and src[i - 1] == " " and ch == "'" and i + 1 < len(src):
            nxt = src[i + 1]
            if nxt in "sm" or (i + 2 < len(src) and nxt + src[i + 2] in ("re", "ve")):
                out.pop()
        out.append(ch)
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------

class Tokenizer:
    """A GGUF vocabulary: text <-> token ids exactly as llama.cpp tokenizes.

    Build it with :meth:`from_metadata` from a GGUF file's metadata (the ``tokenizer.ggml.*``
    keys). SentencePiece-style (``"llama"``) and byte-level BPE (``"gpt2"``) vocabularies are
    supported; for BPE the pre-tokenizer is chosen by ``tokenizer.ggml.pre`` (``default``,
    ``gpt-2``, ``llama-bpe``, ``qwen2``, ``smollm`` and the names llama.cpp aliases to them).

    Attributes
    ----------
    model : str
        ``tokenizer.ggml.model``: ``"llama"`` or ``"gpt2"``.
    pre : str or None
        ``tokenizer.ggml.pre`` for BPE vocabularies.
    n_vocab : int
        Number of tokens.
    bos_id, eos_id, eot_id, eom_id, unk_id, pad_id, sep_id : int or None
        Special token ids (``None`` when the vocabulary has none).
    eog_ids : frozenset of int
        Every id that ends generation (EOS, EOT, EOM and the markers llama.cpp recognises).
    add_bos, add_eos : bool
        Whether :meth:`encode` adds BOS / EOS (``tokenizer.ggml.add_bos_token`` /
        ``add_eos_token``, with llama.cpp's defaults).
    add_space_prefix : bool
        Whether SentencePiece text gets one leading space (``tokenizer.ggml.add_space_prefix``).

    Examples
    --------
    A tiny SentencePiece vocabulary (real ones come from ``qgemv.load_gguf(path).metadata``):

    >>> from qgemv.tokenizer import Tokenizer
    >>> tok = Tokenizer.from_metadata({
    ...     "tokenizer.ggml.model": "llama",
    ...     "tokenizer.ggml.tokens": ["<unk>", "<s>", "</s>", "\u2581", "h", "i",
    ...                               "\u2581h", "\u2581hi"],
    ...     "tokenizer.ggml.scores": [0.0, 0.0, 0.0, -1.0, -2.0, -2.0, -1.0, -0.5],
    ...     "tokenizer.ggml.token_type": [2, 3, 3, 1, 1, 1, 1, 1],
    ... })
    >>> tok.encode("hi hi")
    [1, 7, 7]
    >>> tok.decode([1, 7, 7])
    'hi hi'
    >>> tok.encode("hi<s>hi", add_bos=False)  # control tokens in the text are parsed
    [7, 1, 7]
    >>> tok.decode([7, 1, 7], skip_special=False)
    'hi<s>hi'
    >>> tok.bos_id, tok.eos_id, sorted(tok.eog_ids)
    (1, 2, [2])
    """

    def __init__(self, *, model: str, tokens: Sequence[str], vocab: Mapping[str, int],
                 scores: Sequence[float],
                 attrs: Sequence[int], merges: Sequence[str], pre: str | None,
                 special_ids: Mapping[str, int | None], add_bos: bool, add_eos: bool,
                 add_space_prefix: bool, clean_spaces: bool, eog_ids: Iterable[int]):
        """Use :meth:`from_metadata`; this constructor takes already validated parts."""
        self.model = model
        self.pre = pre
        self.n_vocab = len(tokens)
        self._tokens = list(tokens)
        self._attrs = list(attrs)
        self._vocab = dict(vocab)
        self.bos_id = special_ids.get("bos")
        self.eos_id = special_ids.get("eos")
        self.eot_id = special_ids.get("eot")
        self.eom_id = special_ids.get("eom")
        self.unk_id = special_ids.get("unk")
        self.pad_id = special_ids.get("pad")
        self.sep_id = special_ids.get("sep")
        self.eog_ids = frozenset(eog_ids)
        self.add_bos = add_bos
        self.add_eos = add_eos
        self.add_space_prefix = add_space_prefix
        self.clean_spaces = clean_spaces
        self._pieces: dict[int, bytes] = {}

        # longest first, so a special token is never cut by a shorter one it contains
        special = sorted((i for i, a in enumerate(self._attrs) if a & _SPECIAL),
                         key=lambda i: (-len(self._tokens[i].encode("utf-8")), i))
        self._special_all = [(i, self._tokens[i]) for i in special]
        self._special_user = [(i, self._tokens[i]) for i in special
                              if not self._attrs[i] & _HIDDEN]

        if model == "llama":
            byte_ids = [self._byte_token(b) for b in range(256)]
            self._impl = _SpmModel(self._vocab, list(scores), byte_ids, self.unk_id)
        else:
            self._impl = _BpeModel(self._vocab, merges, _PRE_TOKENIZERS[pre or "default"])

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, object]) -> Tokenizer:
        """Build the tokenizer from GGUF metadata.

        Parameters
        ----------
        metadata : Mapping[str, object]
            GGUF key/value metadata; string arrays as ``list[str]``, numeric arrays as
            sequences or numpy arrays, scalars as Python values. Keys read:
            ``tokenizer.ggml.{model, pre, tokens, scores, token_type, merges,
            bos/eos/eot/eom/unknown/padding/seperator_token_id, add_bos_token,
            add_eos_token, add_space_prefix}``.

        Returns
        -------
        Tokenizer

        Raises
        ------
        ValueError
            If the tokenizer model or pre-tokenizer is not supported, or a required key is
            missing or inconsistent.
        """
        model = metadata.get(_KEY + "model")
        if model not in ("llama", "gpt2"):
            raise ValueError(f"unsupported tokenizer {_KEY}model={model!r}: "
                             "expected 'llama' (SentencePiece) or 'gpt2' (byte-level BPE)")
        tokens, vocab = _read_tokens(metadata)
        n_vocab = len(tokens)
        scores = _read_array(metadata, "scores", n_vocab, float, default=0.0)
        types = _read_array(metadata, "token_type", n_vocab, int, default=1)
        attrs = [_TYPE_TO_ATTR.get(t, _Attr.UNDEFINED) for t in types]

        pre_name = None
        merges: list[str] = []
        if model == "gpt2":
            pre_name = metadata.get(_KEY + "pre") or "default"
            if pre_name not in _PRE_TOKENIZERS:
                raise ValueError(f"unsupported pre-tokenizer {_KEY}pre={pre_name!r}; "
                                 f"supported: {', '.join(sorted(_PRE_TOKENIZERS))}")
            if _KEY + "merges" not in metadata:
                raise ValueError(f"byte-level BPE vocabulary without {_KEY}merges")
            merges = list(metadata[_KEY + "merges"])
            pre = _PRE_TOKENIZERS[pre_name]
            defaults = {"bos": 11, "eos": 11, "unk": None}
            add_bos, add_space_prefix, clean_spaces = pre.add_bos, False, pre.clean_spaces
        else:
            defaults = {"bos": 1, "eos": 2, "unk": 0}
            add_bos, add_space_prefix, clean_spaces = True, True, False

        special_ids = {
            name: _special_id(metadata, key, defaults.get(name), n_vocab)
            for name, key in (("bos", "bos"), ("eos", "eos"), ("eot", "eot"), ("eom", "eom"),
                              ("unk", "unknown"), ("pad", "padding"), ("sep", "seperator"),
                              ("fim_pad", "fim_pad"), ("fim_rep", "fim_rep"),
                              ("fim_sep", "fim_sep"))
        }
        add_bos = bool(metadata.get(_KEY + "add_bos_token", add_bos))
        add_eos = bool(metadata.get(_KEY + "add_eos_token", False))
        add_space_prefix = bool(metadata.get(_KEY + "add_space_prefix", add_space_prefix))
        for flag, name in ((add_bos, "bos"), (add_eos, "eos")):
            if flag and special_ids[name] is None:
                raise ValueError(f"{_KEY}add_{name}_token is true but the vocabulary has no "
                                 f"{name.upper()} token")

        eog_ids = _resolve_eog(vocab, attrs, special_ids)
        return cls(model=model, tokens=tokens, vocab=vocab, scores=scores, attrs=attrs,
                   merges=merges, pre=pre_name, special_ids=special_ids, add_bos=add_bos,
                   add_eos=add_eos, add_space_prefix=add_space_prefix,
                   clean_spaces=clean_spaces, eog_ids=eog_ids)

    # -- encoding ---------------------------------------------------------------------------

    def encode(self, text: str, add_bos: bool = True, parse_special: bool = True) -> list[int]:
        """Token ids of ``text``, as llama.cpp's ``llama_tokenize``.

        Parameters
        ----------
        text : str
            Text to encode.
        add_bos : bool, default True
            Add the special tokens the vocabulary asks for (llama.cpp's ``add_special``): BOS
            when :attr:`add_bos` is set, EOS when :attr:`add_eos` is set. With ``False`` the ids
            are those of the text alone.
        parse_special : bool, default True
            Match control tokens written in the text (``"<|im_start|>"``, ``"<s>"``) as single
            tokens. With ``False`` they are tokenized as plain text; user-defined tokens are
            matched either way, as in llama.cpp.

        Returns
        -------
        list of int
        """
        if not isinstance(text, str):
            raise TypeError(f"encode() expects str, got {type(text).__name__}")
        text.encode("utf-8")  # rejects lone surrogates before any work
        ids: list[int] = []
        if add_bos and self.add_bos:
            ids.append(self.bos_id)
        fragments = self._partition(text, parse_special) if text else []
        if self.model == "llama":
            self._encode_spm(fragments, ids)
        else:
            for fragment in fragments:
                if isinstance(fragment, int):
                    ids.append(fragment)
                else:
                    ids.extend(self._impl.tokenize(fragment))
        if add_bos and self.add_eos:
            ids.append(self.eos_id)
        return ids

    def _partition(self, text: str, parse_special: bool) -> list[str | int]:
        """Split ``text`` into plain-text fragments and special token ids
        (llama.cpp's tokenizer_st_partition: each special token, longest first, is cut out of
        every remaining text fragment at each non-overlapping occurrence)."""
        fragments: list[str | int] = [text]
        for token_id, token_text in (self._special_all if parse_special else self._special_user):
            if not any(isinstance(f, str) and token_text in f for f in fragments):
                continue
            cut: list[str | int] = []
            for fragment in fragments:
                if isinstance(fragment, int) or token_text not in fragment:
                    cut.append(fragment)
                    continue
                for k, part in enumerate(fragment.split(token_text)):
                    if k:
                        cut.append(token_id)
                    if part:
                        cut.append(part)
            fragments = cut
        return fragments

    def _encode_spm(self, fragments: list[str | int], ids: list[int]) -> None:
        prev_special = True  # the text start counts as "after a special token"
        for fragment in fragments:
            if isinstance(fragment, int):
                ids.append(fragment)
                prev_special = True
                continue
            if self.add_space_prefix and prev_special:
                fragment = " " + fragment
            ids.extend(self._impl.tokenize(fragment.replace(" ", _SPACE_ESCAPE)))
            prev_special = False

    # -- decoding ---------------------------------------------------------------------------

    def token_to_piece(self, token_id: int, special: bool = True) -> bytes:
        """The bytes token ``token_id`` stands for (llama.cpp's ``llama_token_to_piece``).

        A piece may be part of a UTF-8 character (byte tokens, byte-level BPE); join pieces
        before decoding, or use :class:`StreamDecoder`.

        Parameters
        ----------
        token_id : int
        special : bool, default True
            Render control and unknown tokens as their text; with ``False`` they are empty.
        """
        self._check_id(token_id)
        if not special and self._attrs[token_id] & _HIDDEN:
            return b""
        piece = self._pieces.get(token_id)
        if piece is None:
            piece = self._pieces[token_id] = self._render(token_id)
        return piece

    def _render(self, token_id: int) -> bytes:
        text = self._tokens[token_id]
        attr = self._attrs[token_id]
        if attr & (_HIDDEN | _Attr.USER_DEFINED):
            return text.encode("utf-8")
        if attr & _Attr.NORMAL:
            if self.model == "llama":
                return text.replace(_SPACE_ESCAPE, " ").encode("utf-8")
            return _gpt2_text_to_bytes(text)
        if attr & _Attr.BYTE:
            return bytes([int(text[3:5], 16)])  # "<0xNN>"
        return b""  # unused and undefined tokens render as nothing, as in llama.cpp

    def decode(self, ids: Iterable[int], skip_special: bool = True,
               clean_spaces: bool = False) -> str:
        """Text of a token sequence; ``decode(encode(s)) == s``.

        Parameters
        ----------
        ids : iterable of int
        skip_special : bool, default True
            Drop control and unknown tokens (BOS, EOS, ``<|im_end|>``...); ``False`` renders
            them as their text.
        clean_spaces : bool, default False
            Apply llama.cpp's detokenizer cleanup (``"a , b"`` -> ``"a, b"``). Off by default
            because it breaks the round trip; :attr:`clean_spaces` holds the vocabulary's
            llama.cpp default.

        Returns
        -------
        str
            The text; invalid UTF-8 (a sequence cut inside a character) becomes U+FFFD.

        Notes
        -----
        For SentencePiece vocabularies the space :meth:`encode` prefixes is removed at the
        start and after every special token. llama.cpp removes it only at the very start
        and only without a leading BOS, which does not round-trip. SentencePiece encodes a
        literal ``"▁"`` (U+2581) like a space, so text containing it decodes with spaces.
        """
        out = bytearray()
        strip_space = self.model == "llama" and self.add_space_prefix
        after_special = True
        for token_id in ids:
            piece = self.token_to_piece(token_id, special=not skip_special)
            is_special = bool(self._attrs[token_id] & _SPECIAL)
            if strip_space and after_special and not is_special and piece.startswith(b" "):
                piece = piece[1:]
            after_special = is_special
            out += piece
        text = out.decode("utf-8", errors="replace")
        return _clean_spaces(text) if clean_spaces else text

    # -- vocabulary queries -----------------------------------------------------------------

    def id_to_token(self, token_id: int) -> str:
        """Raw vocabulary text of ``token_id`` (``"▁Hello"``, ``"ĠHello"``, ``"<0x0A>"``)."""
        self._check_id(token_id)
        return self._tokens[token_id]

    def token_to_id(self, text: str) -> int | None:
        """Id of the vocabulary entry spelled exactly ``text``, or ``None``."""
        return self._vocab.get(text)

    def is_eog(self, token_id: int) -> bool:
        """Whether ``token_id`` ends generation (EOS, EOT, ``<|im_end|>``...)."""
        return token_id in self.eog_ids

    def is_special(self, token_id: int) -> bool:
        """Whether ``token_id`` is a control, user-defined or unknown token."""
        self._check_id(token_id)
        return bool(self._attrs[token_id] & _SPECIAL)

    def __len__(self) -> int:
        return self.n_vocab

    def __repr__(self) -> str:
        kind = "SentencePiece" if self.model == "llama" else f"BPE pre={self.pre!r}"
        return (f"Tokenizer({kind}, n_vocab={self.n_vocab}, bos_id={self.bos_id}, "
                f"eos_id={self.eos_id})")

    def _check_id(self, token_id: int) -> None:
        if not 0 <= token_id < self.n_vocab:
            raise IndexError(f"token id {token_id} out of range for a vocabulary of "
                             f"{self.n_vocab} tokens")

    def _byte_token(self, byte: int) -> int | None:
        """SentencePiece byte-fallback token: ``<0xNN>``, else the byte itself as a token."""
        token = self._vocab.get(f"<0x{byte:02X}>")
        if token is None and byte < 0x80:
            token = self._vocab.get(chr(byte))
        return token


class StreamDecoder:
    """Incremental decoding for generation: feed token ids, get complete UTF-8 text.

    A character split over several byte tokens is held back until its last byte arrives, so
    every returned string can be printed at once.

    Parameters
    ----------
    tokenizer : Tokenizer
    skip_special : bool, default True
        Render control tokens (EOS, ``<|im_end|>``...) as nothing.

    Examples
    --------
    >>> from qgemv.tokenizer import Tokenizer, StreamDecoder
    >>> tok = Tokenizer.from_metadata({
    ...     "tokenizer.ggml.model": "llama",
    ...     "tokenizer.ggml.tokens": ["<unk>", "<s>", "</s>", "\u2581hi", "<0xC3>", "<0xA9>"],
    ...     "tokenizer.ggml.token_type": [2, 3, 3, 1, 6, 6],
    ... })
    >>> stream = StreamDecoder(tok)
    >>> [stream.push(t) for t in (3, 4, 5, 2)]
    [' hi', '', 'é', '']
    >>> stream.flush()
    ''
    """

    def __init__(self, tokenizer: Tokenizer, skip_special: bool = True):
        self._tokenizer = tokenizer
        self._special = not skip_special
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def push(self, token_id: int) -> str:
        """Text completed by ``token_id`` (possibly empty)."""
        return self._utf8.decode(self._tokenizer.token_to_piece(token_id, self._special))

    def flush(self) -> str:
        """Whatever is still held back (an incomplete character becomes U+FFFD)."""
        return self._utf8.decode(b"", final=True)


# ---------------------------------------------------------------------------------------------
# from_metadata helpers
# ---------------------------------------------------------------------------------------------

def _read_tokens(metadata: Mapping[str, object]) -> tuple[list[str], dict[str, int]]:
    """The token texts and the text -> id map."""
    key = _KEY + "tokens"
    if key not in metadata:
        raise ValueError(f"GGUF metadata has no {key}")
    tokens = list(metadata[key])
    if "" in tokens:
        # llama.cpp's placeholder for empty entries
        tokens = [text or f"[EMPTY_{i}]" for i, text in enumerate(tokens)]
    vocab = {text: i for i, text in enumerate(tokens)}
    if len(vocab) != len(tokens):
        counts: dict[str, list[int]] = {}
        for i, text in enumerate(tokens):
            counts.setdefault(text, []).append(i)
        text, ids = next((t, ids) for t, ids in counts.items() if len(ids) > 1)
        raise ValueError(f"duplicate token in {key}: {text!r} has ids {ids}")
    return tokens, vocab


def _read_array(metadata: Mapping[str, object], name: str, n_vocab: int, kind, default):
    key = _KEY + name
    if key not in metadata:
        return [default] * n_vocab
    values = _as_list(metadata[key])
    if len(values) < n_vocab:
        raise ValueError(f"{key} has {len(values)} entries for {n_vocab} tokens")
    return [kind(v) for v in values[:n_vocab]]


def _resolve_eog(vocab: Mapping[str, int], attrs: list[int],
                 special_ids: dict[str, int | None]) -> set[int]:
    """End-of-generation ids, detected from the token texts as llama.cpp does.

    Also completes ``special_ids`` (eot, eom, fim_*) and marks the detected tokens as control
    tokens in ``attrs``, as llama.cpp overrides their type.
    """
    for name, texts in (("eot", _EOT_TEXTS), ("eom", _EOM_TEXTS), ("fim_pad", _FIM_PAD_TEXTS),
                        ("fim_rep", _FIM_REP_TEXTS), ("fim_sep", _FIM_SEP_TEXTS)):
        if special_ids[name] is None:
            special_ids[name] = _find_text(vocab, texts)
            if special_ids[name] is not None:
                attrs[special_ids[name]] |= _Attr.CONTROL

    eog = {special_ids[n] for n in ("fim_pad", "fim_rep", "fim_sep") if special_ids[n] is not None}
    for text in _EOG_TEXTS:
        if text in vocab:
            eog.add(vocab[text])
            attrs[vocab[text]] |= _Attr.CONTROL
    for text in _ALWAYS_RENDERED:
        if text in vocab:
            attrs[vocab[text]] = _Attr.USER_DEFINED
    eog.update(special_ids[n] for n in ("eos", "eot", "eom") if special_ids[n] is not None)

    # gpt-oss / solar-open: "<|end|>" ends a message, not the generation
    names = vocab.keys()
    if "<|end|>" in vocab and ({"<|return|>", "<|call|>"} <= names
                               or {"<|calls|>", "<|flush|>"} <= names):
        eog.discard(vocab["<|end|>"])
        attrs[vocab["<|end|>"]] = _Attr.USER_DEFINED
    # gemma 4: "</s>" is an ordinary token there
    if "<|tool_response>" in vocab and "</s>" in vocab:
        eog.discard(vocab["</s>"])
        attrs[vocab["</s>"]] = _Attr.NORMAL
    return eog


def _gpt2_text_to_bytes(text: str) -> bytes:
    """Bytes of a byte-level BPE token (llama_decode_text); characters outside GPT-2's byte
    alphabet are written as llama.cpp writes them, ``[UNK_BYTE_0x..]``."""
    out = bytearray()
    for ch in text:
        byte = _GPT2_TO_BYTE.get(ch)
        if byte is None:
            out += f"[UNK_BYTE_0x{ch.encode('utf-8').hex()}{text}]".encode("utf-8")
        else:
            out.append(byte)
    return bytes(out)
