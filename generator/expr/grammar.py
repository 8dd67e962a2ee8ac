"""The expression grammar: a subset of CEL's syntax, parsed by Lark into the nodes of `nodes.py`.

GRAMMAR is the language's one definition of its syntax; docs/expressions.md is generated from it (and from
the function library), never written by hand. Every expression the grammar accepts is also a CEL expression
with the same meaning under `semantics: strict` (tests/test_expressions.py holds it to cel-python).
"""

from __future__ import annotations

GRAMMAR = r"""
?start: expr

?expr: disjunction
     | disjunction "?" disjunction ":" expr       -> conditional

?disjunction: conjunction
            | disjunction OR conjunction         -> or_

?conjunction: relation
            | conjunction AND relation           -> and_

?relation: addition
         | addition RELATION addition            -> relation
         | addition IN addition                  -> relation

?addition: multiplication
         | addition ADDITIVE multiplication      -> arithmetic

?multiplication: unary
               | multiplication MULTIPLICATIVE unary   -> arithmetic

?unary: member
      | "!" unary                                -> not_
      | "-" unary                                -> negate

?member: primary
       | member "." IDENT                        -> select
       | member "." IDENT "(" [arguments] ")"    -> method
       | member "[" expr "]"                     -> index

?primary: IDENT                                  -> name
        | IDENT "(" [arguments] ")"              -> call
        | "(" expr ")"
        | "[" [arguments] "]"                    -> list_
        | "{" [entries] "}"                      -> map_
        | INT                                    -> int_
        | DOUBLE                                 -> double
        | STRING                                 -> string
        | "true"                                 -> true
        | "false"                                -> false
        | "null"                                 -> null

arguments: expr ("," expr)*
entries: entry ("," entry)*
entry: expr ":" expr

OR: "||"
AND: "&&"
IN: "in"
RELATION: "==" | "!=" | "<=" | ">=" | "<" | ">"
ADDITIVE: "+" | "-"
MULTIPLICATIVE: "*" | "/" | "%"
IDENT: /[_a-zA-Z][_a-zA-Z0-9]*/
INT: /0|[1-9][0-9]*/
DOUBLE: /([0-9]+\.[0-9]+([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)/
STRING: /"([^"\\\n]|\\.)*"/ | /'([^'\\\n]|\\.)*'/

%import common.WS
%ignore WS
"""

# Words the grammar reserves: never a name, a field reached with `.`, or a macro's variable.
RESERVED = frozenset({"true", "false", "null", "in"})
