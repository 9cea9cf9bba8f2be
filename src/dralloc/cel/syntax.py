"""CEL source text → AST: a tokenizer and a recursive-descent parser with cel-go's error format.

The AST is made of :class:`Node` objects. Macros are expanded here, as cel-go's parser does:
``has(a.b)`` becomes a test-only select, ``x.all(v, p)`` and friends become comprehension nodes,
``cel.bind(v, init, e)`` a bind node. Operators become calls with cel-go's internal names (``_+_``,
``_[_]``, ``!_``, ``_?_:_``) so that the compiler handles them uniformly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from dralloc.cel.errors import CELCompileError, render_issues

__all__ = ["Node", "parse"]

MAX_DEPTH = 250  # cel-go's default maxRecursionDepth is 250

RESERVED = frozenset(
    "as break const continue else for function if import let loop package namespace return var void while".split()
)


@dataclass(slots=True)
class Node:
    kind: str  # lit ident select call list map struct comp bind
    pos: int
    value: Any = None  # lit value, ident/select name, call function name
    args: list[Any] = field(default_factory=list)
    target: Any = None  # select operand / receiver of a member call
    test_only: bool = False  # has()
    optional: bool = False  # ".?" select / "[?" index
    extra: Any = None  # comprehension details, optional-element indexes, map entries


class UInt(int):
    """A CEL uint value (a distinct type from int)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n\f]+|//[^\n]*)
  | (?P<float>(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<int>[0-9]+[uU]?)
  | (?P<string>[rRbB]{0,2}(?:\"\"\"|'''|"|'))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<quoted>`[A-Za-z0-9_./ -]+`)
  | (?P<op>\.\?|\[\?|==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,()\[\]{}])
    """,
    re.VERBOSE,
)


_ESCAPED_NAME_CHAR = re.compile(r"[A-Za-z0-9_./ -]")


@dataclass(slots=True)
class Token:
    kind: str
    text: str
    pos: int
    value: Any = None


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
            "\\": "\\", "?": "?", '"': '"', "'": "'", "`": "`"}


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[Token] = []
        # literals the lexer accepts but cel-go's visitor refuses (reported with the parser's, see _Parser)
        self.issues: list[tuple[int, str]] = []

    def error(self, pos: int, message: str) -> CELCompileError:
        return CELCompileError(render_issues(self.text, [*self.issues, (pos, message)]))

    def run(self) -> list[Token]:
        text, pos, n = self.text, 0, len(self.text)
        while pos < n:
            m = _TOKEN.match(text, pos)
            if m is None:
                pos = self._unrecognized(pos)
                continue
            kind = m.lastgroup
            if kind == "ws":
                pos = m.end()
                continue
            if kind == "string":
                token, pos = self._string(m.group(kind), pos)
                self.tokens.append(token)
                continue
            tok = Token(kind, m.group(kind), pos)  # type: ignore[arg-type]
            if kind == "quoted":  # a backquoted field name: only valid after "." (checked by the parser)
                tok.kind = "qident"
                tok.value = tok.text[1:-1]
            if kind == "ident" and tok.text in ("true", "false", "null"):
                tok.kind = "lit"
                tok.value = {"true": True, "false": False, "null": None}[tok.text]
            elif kind in ("int", "hex"):
                tok.value = self._int(tok)
                tok.kind = "lit"
            elif kind == "float":
                tok.value = float(tok.text)
                tok.kind = "lit"
                if tok.value in (float("inf"), float("-inf")):  # Go's ParseFloat: out of range
                    self.issues.append((tok.pos, "invalid double literal"))
            self.tokens.append(tok)
            pos = m.end()
        self.tokens.append(Token("eof", "", n))
        return self.tokens

    def _unrecognized(self, pos: int) -> int:
        """ANTLR's lexer on text no token matches: it reports what it read up to and including the character
        where matching failed, skips that much and goes on lexing. Returns where lexing resumes."""
        text, n = self.text, len(self.text)
        end = pos + 1
        if text[pos] in "|&=" and end < n:
            end += 1  # the first character of '||', '&&' or '==' was read, the second did not match
        elif text[pos] == "`":
            while end < n and _ESCAPED_NAME_CHAR.match(text[end]):
                end += 1
            end = min(end + 1, n)
        self.issues.append((pos, f"Syntax error: token recognition error at: '{text[pos:end]}'"))
        return end

    def _int(self, tok: Token) -> Any:
        text = tok.text
        unsigned = text[-1] in "uU"
        if unsigned:
            text = text[:-1]
        value = int(text, 16) if text[:2] in ("0x", "0X") else int(text)
        if unsigned:
            if value > 0xFFFFFFFFFFFFFFFF:
                self.issues.append((tok.pos, "invalid uint literal"))
                return UInt(0)
            return UInt(value)
        # 9223372036854775808 is only valid under unary minus; the parser checks the range.
        return value

    def _string(self, opener: str, start: int) -> tuple[Token, int]:
        prefix = opener.rstrip("\"'")
        quote = opener[len(prefix):]
        raw = "r" in prefix.lower()
        is_bytes = "b" in prefix.lower()
        if len(prefix) == 2 and prefix.lower() not in ("rb", "br"):
            raise self.error(start, "Syntax error: token recognition error")
        text = self.text
        i = start + len(opener)
        out: list[str] = []
        byte_out = bytearray()

        def emit(ch: str) -> None:
            if is_bytes:
                byte_out.extend(ch.encode("utf-8"))
            else:
                out.append(ch)

        while True:
            if i >= len(text):
                raise self.error(start, "Syntax error: token recognition error at: '" + text[start:] + "'")
            if text.startswith(quote, i):
                i += len(quote)
                break
            ch = text[i]
            if len(quote) == 1 and ch in "\r\n":
                raise self.error(start, "Syntax error: token recognition error at: '" + text[start:i + 1] + "'")
            if ch == "\\" and not raw:
                i = self._escape(i, emit, byte_out if is_bytes else None)
                continue
            if ch == "\\" and raw:
                # a raw string keeps the backslash; a backslash-quote does not end it
                emit(ch)
                if i + 1 < len(text) and text[i + 1] == quote[0] and len(quote) == 1:
                    emit(text[i + 1])
                    i += 2
                    continue
                i += 1
                continue
            emit(ch)
            i += 1
        value: Any = bytes(byte_out) if is_bytes else "".join(out)
        return Token("lit", text[start:i], start, value), i

    def _escape(self, i: int, emit: Any, byte_out: bytearray | None) -> int:
        text = self.text
        if i + 1 >= len(text):
            raise self.error(i, "Syntax error: invalid escape sequence")
        c = text[i + 1]
        if c in _ESCAPES:
            emit(_ESCAPES[c])
            return i + 2
        if c in "xX":
            digits = text[i + 2:i + 4]
            if len(digits) != 2 or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise self.error(i, "Syntax error: invalid escape sequence")
            code = int(digits, 16)
            if byte_out is not None:
                byte_out.append(code)
            else:
                emit(chr(code))
            return i + 4
        if c in "uU":
            width = 4 if c == "u" else 8
            digits = text[i + 2:i + 2 + width]
            if len(digits) != width or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise self.error(i, "Syntax error: invalid escape sequence")
            code = int(digits, 16)
            if byte_out is not None:
                raise self.error(i, "Syntax error: invalid escape sequence in bytes literal")
            if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                raise self.error(i, "Syntax error: invalid unicode code point")
            emit(chr(code))
            return i + 2 + width
        if c in "0123":
            digits = text[i + 1:i + 4]
            if len(digits) != 3 or not all(d in "01234567" for d in digits):
                raise self.error(i, "Syntax error: invalid escape sequence")
            code = int(digits, 8)
            if byte_out is not None:
                byte_out.append(code)
            else:
                emit(chr(code))
            return i + 4
        raise self.error(i, "Syntax error: invalid escape sequence")


# What cel-go's grammar accepts where an operand starts (ANTLR's "expecting" set).
_PRIMARY_START = ("{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, "
                  "BYTES, IDENTIFIER}")

def _shown(tok: Token) -> str:
    return "<EOF>" if tok.kind == "eof" else tok.text


_FOLLOW_OPERAND = frozenset(("==", "!=", "<", "<=", ">", ">=", "in", "&&", "||", "+", "-", "*", "/", "%", "?", ":",
                             ")", "]", "}", ",", ".", ".?", "[", "[?"))


def _follows_operand(tok: Token) -> bool:
    """Whether a token can follow an operand (ANTLR's recovery set): recovery skips to one of these."""
    return tok.kind == "eof" or (tok.kind in ("op", "ident") and tok.text in _FOLLOW_OPERAND)


def _starts_operand(tok: Token) -> bool:
    """Whether a token can start a unary expression in cel-go's grammar ('in' is a keyword there)."""
    if tok.kind == "lit":
        return True
    if tok.kind == "ident":
        return tok.text != "in"
    return tok.kind == "op" and tok.text in ("[", "[?", "{", "(", ".", "-", "!")


_MAP_START = ("{'[', '{', '}', '(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "
              "STRING, BYTES, IDENTIFIER}")

_STRUCT_START = "{'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}"

_RELOPS = {"<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_", "in": "@in"}
_ADDOPS = {"+": "_+_", "-": "_-_"}
_MULOPS = {"*": "_*_", "/": "_/_", "%": "_%_"}


class _Parser:
    """cel-go parses in two steps: ANTLR builds the tree (a syntax error stops this parser, which does not
    imitate ANTLR's recovery), then a visitor builds the AST and reports what the grammar lets through
    (out-of-range literals, reserved identifiers, malformed macro arguments) *and goes on*. Those issues
    are collected here, so an expression reports every one of them, each with its line, column and caret,
    sorted by position and joined as cel-go's Errors.ToDisplayString does."""

    def __init__(self, text: str, macros: bool = True, escaped_identifiers: bool = False) -> None:
        self.text = text
        self.escaped_identifiers = escaped_identifiers
        lexer = _Lexer(text)
        self.tokens = lexer.run()
        self.issues = lexer.issues
        # ANTLR's error-recovery mode: after a syntax error, further ones are not reported until a token has
        # been matched again
        self.recovering = False
        self.i = 0
        self.depth = 0
        self.macros = macros

    # --- helpers ------------------------------------------------------------------------------------

    def error(self, pos: int, message: str) -> CELCompileError:
        """A syntax error: it ends the parse, reported with the issues found before it."""
        return CELCompileError(render_issues(self.text, [*self.issues, (pos, message)]))

    def report(self, pos: int, message: str) -> None:
        """An issue cel-go's visitor reports before going on."""
        self.issues.append((pos, message))

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def next(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        self.recovering = False
        return tok

    def syntax_issue(self, pos: int, message: str) -> None:
        """A syntax error the parse recovers from (reported unless one was just reported)."""
        if not self.recovering:
            self.report(pos, f"Syntax error: {message}")
        self.recovering = True

    def at(self, text: str) -> bool:
        tok = self.tokens[self.i]
        return tok.kind in ("op", "ident") and tok.text == text

    def expect(self, text: str) -> Token:
        """Match a token, or recover as ANTLR's recoverInline does: one stray token before it is deleted
        ("extraneous input"); a closing bracket missing before a token that may follow it is taken as
        there ("missing ')' at '<EOF>'"); anything else ends the parse."""
        tok = self.tok
        if self.at(text):
            return self.next()
        if self._after().text == text and self._after().kind in ("op", "ident"):
            self.syntax_issue(tok.pos, f"extraneous input '{tok.text}' expecting '{text}'")
            self.i += 1
            return self.next()
        if (text in (")", "]", "}") and _follows_operand(tok)) or (text == ":" and _starts_operand(tok)):
            self.syntax_issue(tok.pos, f"missing '{text}' at '{_shown(tok)}'")
            return tok
        raise self.stop(tok, f"'{text}'")

    def close_literal(self, closer: str) -> None:
        """The end of a list or map literal, where a trailing ',' may come first: expected {',', closer}."""
        if self.at(closer):
            self.next()
            return
        wanted = f"{{',', '{closer}'}}"
        if self._after().text not in (",", closer):
            raise self.stop(self.tok, wanted)
        self.syntax_issue(self.tok.pos, f"extraneous input '{self.tok.text}' expecting {wanted}")
        self.i += 1
        if self.at(","):
            self.next()
        self.expect(closer)

    def _after(self) -> Token:
        """The token after the current one (ANTLR's LA(2))."""
        return self.tokens[min(self.i + 1, len(self.tokens) - 1)]

    def no_viable_alternative(self, dot: Token, tok: Token) -> CELCompileError:
        """'.' followed by what is neither a field nor a method name: ANTLR cannot choose between them and
        reports the text from the dot through the token, where the token is; cel-go rewrites it for
        true/false/null, which are keywords."""
        if self.recovering:
            return CELCompileError(render_issues(self.text, self.issues))
        if tok.kind == "lit" and tok.text in ("true", "false", "null"):
            message = f"Syntax error: mismatched input '{tok.text}' expecting IDENTIFIER"
        else:
            end = tok.pos + len(tok.text) if tok.kind != "eof" else dot.pos + len(dot.text)
            message = f"Syntax error: no viable alternative at input '{self.text[dot.pos:end]}'"
        return CELCompileError(render_issues(self.text, [*self.issues, (tok.pos, message)]))

    def stop(self, tok: Token, wanted: str) -> CELCompileError:
        """A syntax error this parser does not recover from; right after another one ANTLR would not report
        it (its error-recovery mode), so only the issues so far are."""
        if self.recovering:
            return CELCompileError(render_issues(self.text, self.issues))
        return self.unexpected(tok, wanted)

    def unexpected(self, tok: Token, wanted: str | None = None) -> CELCompileError:
        msg = f"Syntax error: mismatched input '{_shown(tok)}'"
        if wanted:
            msg += f" expecting {wanted}"
        return self.error(tok.pos, msg)

    def enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(pos, "expression recursion limit exceeded")

    # --- grammar ------------------------------------------------------------------------------------

    def parse(self) -> Node:
        if self.tok.kind == "eof":
            raise self.unexpected(self.tok, _PRIMARY_START)
        node = self.expr()
        if self.tok.kind != "eof":
            if self.tokens[self.i + 1].kind != "eof":
                raise self.unexpected(self.tok, "<EOF>")
            # ANTLR's single-token deletion: one stray token before the end is dropped, the parse stands
            self.syntax_issue(self.tok.pos, f"extraneous input '{self.tok.text}' expecting <EOF>")
        if self.issues:
            raise CELCompileError(render_issues(self.text, self.issues))
        return node

    def expr(self) -> Node:
        self.enter(self.tok.pos)
        cond = self.or_()
        if self.at("?"):
            q = self.next()
            then = self.or_()
            self.expect(":")
            other = self.expr()
            cond = Node("call", q.pos, "_?_:_", [cond, then, other])
        self.depth -= 1
        return cond

    def or_(self) -> Node:
        left = self.and_()
        while self.at("||"):
            op = self.next()
            left = Node("call", op.pos, "_||_", [left, self.and_()])
        return left

    def and_(self) -> Node:
        left = self.relation()
        while self.at("&&"):
            op = self.next()
            left = Node("call", op.pos, "_&&_", [left, self.relation()])
        return left

    def relation(self) -> Node:
        left = self.addition()
        while True:
            tok = self.tok
            name = _RELOPS.get(tok.text) if tok.kind in ("op", "ident") else None
            if name is None:
                return left
            self.next()
            right = self.addition()
            left = Node("call", tok.pos, name, [left, right])

    def addition(self) -> Node:
        left = self.multiplication()
        while self.tok.kind == "op" and self.tok.text in _ADDOPS:
            op = self.next()
            left = Node("call", op.pos, _ADDOPS[op.text], [left, self.multiplication()])
        return left

    def multiplication(self) -> Node:
        left = self.unary()
        while self.tok.kind == "op" and self.tok.text in _MULOPS:
            op = self.next()
            left = Node("call", op.pos, _MULOPS[op.text], [left, self.unary()])
        return left

    def unary(self) -> Node:
        if not _starts_operand(self.tok) and _starts_operand(self.tokens[min(self.i + 1, len(self.tokens) - 1)]):
            # ANTLR's single-token deletion where an operand starts: "* a" drops the '*' and goes on
            stray = self.tok
            self.i += 1
            self.syntax_issue(stray.pos, f"extraneous input '{stray.text}' expecting {_PRIMARY_START}")
        tok = self.tok
        if tok.kind == "op" and tok.text == "!":
            count = 0
            while self.at("!"):
                self.next()
                count += 1
            node = self.member()
            for _ in range(count):
                node = Node("call", tok.pos, "!_", [node])
            return node
        if tok.kind == "op" and tok.text == "-":
            count = 0
            while self.at("-"):
                self.next()
                count += 1
            lit = self.tok
            node = self.member()
            # Fold "-<int literal>" as cel-go does, so that -9223372036854775808 is representable.
            if (count % 2 == 1 and node.kind == "lit" and node is not None and lit.kind == "lit"
                    and type(node.value) in (int, float) and node.pos == lit.pos):
                node = Node("lit", tok.pos, -node.value)
                count -= 1
            for _ in range(count):
                node = Node("call", tok.pos, "-_", [node])
            self._check_int_range(node)
            return node
        node = self.member()
        self._check_int_range(node)
        return node

    def _check_int_range(self, node: Node) -> None:
        if node.kind == "lit" and type(node.value) is int and not -(1 << 63) <= node.value < (1 << 63):
            self.report(node.pos, "invalid int literal")

    def member(self) -> Node:
        node = self.primary()
        while True:
            tok = self.tok
            if tok.kind == "op" and tok.text in (".", ".?"):
                self.next()
                name_tok = self.next()
                if name_tok.kind == "qident":
                    # escaped field names are an opt-in cel-go feature that Kubernetes does not enable
                    if not self.escaped_identifiers:
                        self.report(name_tok.pos, "unsupported syntax: '`'")
                    node = Node("select", tok.pos, name_tok.value, target=node, optional=tok.text == ".?")
                    continue
                if name_tok.kind != "ident" or name_tok.text == "in":  # 'in' is a keyword token in cel-go
                    if tok.text == ".?":  # only a field name can follow: escapeIdent's mismatch
                        raise self.stop(name_tok, "{IDENTIFIER, ESC_IDENTIFIER}")
                    raise self.no_viable_alternative(tok, name_tok)
                if tok.text == "." and self.at("("):
                    paren = self.next()
                    args = self.expr_list(")")
                    node = self.member_call(name_tok, node, args, paren.pos)
                else:
                    node = Node("select", name_tok.pos - 1 if tok.text == "." else tok.pos, name_tok.text,
                                target=node, optional=tok.text == ".?")
            elif tok.kind == "op" and tok.text in ("[", "[?"):
                self.next()
                index = self.expr()
                self.expect("]")
                node = Node("call", tok.pos, "_[_]", [node, index], optional=tok.text == "[?")
            else:
                return node

    def expr_list(self, close: str) -> list[Node]:
        args: list[Node] = []
        if self.at(close):
            self.next()
            return args
        while True:
            args.append(self.expr())
            if self.at(","):
                self.next()
                continue
            self.expect(close)
            return args

    def missing_operand(self) -> Node:
        """No operand starts here: report it, skip what cannot follow an operand and go on with an error
        node, as ANTLR's recovery does (so "1 + +" reports the '+' and then the end)."""
        tok = self.tok
        self.syntax_issue(tok.pos, f"mismatched input '{_shown(tok)}' expecting {_PRIMARY_START}")
        while not _follows_operand(self.tok):
            self.i += 1
        return Node("error", tok.pos)

    def primary(self) -> Node:
        if not _starts_operand(self.tok):
            return self.missing_operand()
        tok = self.next()
        if tok.kind == "lit":
            return Node("lit", tok.pos, tok.value)
        if tok.kind == "op" and tok.text == "(":
            node = self.expr()
            self.expect(")")
            return node
        if tok.kind == "op" and tok.text in ("[", "[?"):
            if tok.text == "[?":  # "[?x, ...]": the lexer joined "[" with the first element's "?"
                self.i -= 1
                self.tokens[self.i] = Token("op", "?", tok.pos + 1)
            return self.list_literal(tok)
        if tok.kind == "op" and tok.text == "{":
            return self.map_literal(tok)
        leading_dot = False
        if tok.kind == "op" and tok.text == ".":
            leading_dot = True
            tok = self.next()
        if leading_dot and tok.kind != "ident":
            raise self.no_viable_alternative(self.tokens[self.i - 2], tok)
        if tok.kind == "ident":
            if tok.text in RESERVED:
                self.report(tok.pos, f"reserved identifier: {tok.text}")
                return Node("error", tok.pos)
            name = ("." if leading_dot else "") + tok.text
            if self.at("("):
                paren = self.next()
                args = self.expr_list(")")
                return self.global_call(tok, name, args, paren.pos)
            if self.at("{"):
                brace = self.next()
                return self.struct_literal(tok, name, brace)
            return Node("ident", tok.pos, name)
        raise self.unexpected(tok, _PRIMARY_START)

    def list_literal(self, open_tok: Token) -> Node:
        elems: list[Node] = []
        optional_idx: list[int] = []
        if self.at(",") and self.tokens[self.i + 1].text == "]":  # '[' listInit? ','? ']': "[,]" is empty
            self.next()
        while not self.at("]"):
            if self.at("?"):
                self.next()
                optional_idx.append(len(elems))
            elems.append(self.expr())
            if self.at(","):
                self.next()
                continue
            break
        self.close_literal("]")
        return Node("list", open_tok.pos, args=elems, extra=optional_idx)

    def map_literal(self, open_tok: Token) -> Node:
        entries: list[tuple[Node, Node, bool]] = []
        if not (_starts_operand(self.tok) or self.at("}") or self.at("?") or self.at(",")):
            # where the first entry may start, '}', ',' and '?' are expected too
            after = self.tokens[min(self.i + 1, len(self.tokens) - 1)]
            if not (_starts_operand(after) or after.text in ("}", "?", ",")):
                raise self.stop(self.tok, _MAP_START)
            self.syntax_issue(self.tok.pos, f"extraneous input '{self.tok.text}' expecting {_MAP_START}")
            self.i += 1
        if self.at(",") and self.tokens[self.i + 1].text == "}":  # '{' entries? ','? '}': "{,}" is empty
            self.next()
        while not self.at("}"):
            optional = False
            if self.at("?"):
                self.next()
                optional = True
            key = self.expr()
            self.expect(":")
            value = self.expr()
            entries.append((key, value, optional))
            if self.at(","):
                self.next()
                continue
            break
        self.close_literal("}")
        return Node("map", open_tok.pos, extra=entries)

    def struct_literal(self, name_tok: Token, name: str, brace: Token) -> Node:
        fields: list[tuple[str, Node, bool]] = []
        if not (self.tok.kind in ("ident", "qident") or self.at("}") or self.at("?") or self.at(",")):
            # where the first field may start, '}', ',' and '?' are expected too
            after = self.tokens[min(self.i + 1, len(self.tokens) - 1)]
            if not (after.kind in ("ident", "qident") or after.text in ("}", "?", ",")):
                raise self.stop(self.tok, _STRUCT_START)
            self.syntax_issue(self.tok.pos, f"extraneous input '{self.tok.text}' expecting {_STRUCT_START}")
            self.i += 1
        while not self.at("}"):
            optional = False
            if self.at("?"):
                self.next()
                optional = True
            ftok = self.next()
            if ftok.kind != "ident":
                raise self.stop(ftok, "{IDENTIFIER, ESC_IDENTIFIER}" if optional else "IDENTIFIER")
            self.expect(":")
            fields.append((ftok.text, self.expr(), optional))
            if self.at(","):
                self.next()
                continue
            break
        self.expect("}")
        return Node("struct", brace.pos, name, extra=fields)

    # --- macros -------------------------------------------------------------------------------------

    def global_call(self, tok: Token, name: str, args: list[Node], pos: int) -> Node:
        # cel-go places a call (and a macro's expansion) at its opening parenthesis
        if self.macros and name == "has" and len(args) == 1:
            arg = args[0]
            if arg.kind != "select" or arg.optional or arg.test_only:
                self.report(arg.pos, "invalid argument to has() macro")
                return Node("lit", pos, None)
            return Node("select", pos, arg.value, target=arg.target, test_only=True)
        return Node("call", pos, name, args)

    def member_call(self, name_tok: Token, target: Node, args: list[Node], pos: int) -> Node:
        name = name_tok.text
        if self.macros:
            if target.kind == "ident" and target.value == "cel" and name == "bind" and len(args) == 3:
                var = self._var(args[0], name_tok)
                return Node("bind", pos, var, [args[1], args[2]])
            one_var = {"all": 2, "exists": 2, "exists_one": 2, "existsOne": 2, "filter": 2}
            if name in one_var and len(args) == 2:
                message = "argument is not an identifier" if name == "filter" else "argument must be a simple name"
                return Node("comp", pos, name if name != "existsOne" else "exists_one", [args[1]], target=target,
                            extra=(self._var(args[0], name_tok, message), None))
            if name in ("all", "exists", "existsOne", "exists_one") and len(args) == 3:
                v1, v2 = self._two_vars(args, name_tok)
                kind = {"existsOne": "exists_one"}.get(name, name)
                return Node("comp", pos, kind, [args[2]], target=target, extra=(v1, v2))
            if name == "map" and len(args) in (2, 3):
                return Node("comp", pos, "map", args[1:], target=target,
                            extra=(self._var(args[0], name_tok, "argument is not an identifier"), None))
            if name in ("transformList", "transformMap", "transformMapEntry") and len(args) in (3, 4):
                v1, v2 = self._two_vars(args, name_tok)
                return Node("comp", pos, name, args[2:], target=target, extra=(v1, v2))
            if name == "sortBy" and len(args) == 2:
                return Node("comp", pos, "sortBy", [args[1]], target=target, extra=(self._var(args[0], name_tok), None))
            if name in ("optMap", "optFlatMap") and len(args) == 2:
                return Node("comp", pos, name, [args[1]], target=target, extra=(self._var(args[0], name_tok), None))
        return Node("call", pos, name, args, target=target)

    def _var(self, node: Node, at: Token, message: str = "argument must be a simple name") -> str:
        if node.kind != "ident" or node.value.startswith("."):
            self.report(node.pos, message)
            return "@error"
        if node.value in ("@result", "__result__"):
            self.report(node.pos, "iteration variable overwrites accumulator variable")
        return str(node.value)

    def _two_vars(self, args: list[Node], at: Token) -> tuple[str, str]:
        """The two iteration variables of a two-variable macro; the first bad one is its only error, and a
        repeated name is reported at the second (cel-go's extractIterVars)."""
        v1 = self._var(args[0], at)
        if v1 == "@error":
            return v1, v1
        v2 = self._var(args[1], at)
        if v1 == v2:
            self.report(args[1].pos, f"duplicate variable name: {v1}")
        return v1, v2


def parse(text: str, *, macros: bool = True, escaped_identifiers: bool = False) -> Node:
    """Parse CEL source; raises CELCompileError with cel-go's position and caret format.
    ``escaped_identifiers`` enables cel-go's opt-in backquoted field names (off in Kubernetes)."""
    return _Parser(text, macros, escaped_identifiers).parse()
