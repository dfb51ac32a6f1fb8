"""The article's tokens and what an analysis makes of them before they are counted: the stop lists, the stemmers,
`Analysis` (as an Elasticsearch analyzer) and `tokenize`."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import Stemmer

from ..core.params import SPECS

TOKEN_PATTERN = r"[a-z0-9]+"

STOP_WORDS: frozenset[str] = frozenset(
    "the a an of to in on for and or but that this is are was be can i my me you your do does did how what "
    "where when which much many it its with at by from as if there not no s".split()
)

LUCENE_STOP_WORDS: frozenset[str] = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with".split()
)  # Lucene's English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, Elasticsearch's `_english_`): 33 words

STOP_LISTS: dict[str, frozenset[str]] = {"article": STOP_WORDS, "lucene": LUCENE_STOP_WORDS, "none": frozenset()}

STEMMERS: dict[str, str | None] = {"none": None, "snowball": "english", "porter": "porter"}  # PyStemmer's names

assert tuple(STOP_LISTS) == SPECS["stopwords"].options and tuple(STEMMERS) == SPECS["stemmer"].options

_TOKEN_RE = re.compile(TOKEN_PATTERN)


@dataclass(frozen=True)
class Analysis:
    """What becomes of a text's `[a-z0-9]+` tokens (lower-cased) before they are counted, as in an Elasticsearch
    analyzer: the stop words of `stopwords` dropped, then each word stemmed by `stemmer`.

    * stopwords: "article" (the article's 45 words, the default), "lucene" (Lucene's English stop set, 33
      words) or "none";
    * stemmer: "none" (the default), "snowball" (Snowball's English stemmer, "Porter2") or "porter" (Porter's
      1980 algorithm), both Snowball's C stemmers through PyStemmer.

    The default is the article's analysis, so its tables stay exact.

    >>> Analysis("snowball").analyse("Refunds are refunded")
    ['refund', 'refund']
    >>> Analysis("none", "none").analyse("Refunds are refunded")
    ['refunds', 'are', 'refunded']
    """

    stemmer: str = "none"
    stopwords: str = "article"

    def __post_init__(self) -> None:
        for name in ("stemmer", "stopwords"):
            SPECS[name].check(getattr(self, name))

    @property
    def stop_words(self) -> frozenset[str]:
        """The stop words this analysis drops."""
        return STOP_LISTS[self.stopwords]

    @property
    def is_article(self) -> bool:
        """True for the article's analysis (no stemmer, its 45 stop words)."""
        return self == ARTICLE_ANALYSIS

    def stems(self, words: list[str]) -> list[str]:
        """Each word's stem (the words themselves without a stemmer)."""
        algorithm = STEMMERS[self.stemmer]
        return list(words) if algorithm is None else _stemmer(algorithm).stemWords(words)

    def analyse(self, text: str) -> list[str]:
        """The text's terms in text order: tokens, the stop words dropped, each one stemmed."""
        return self.stems([t for t in _TOKEN_RE.findall(text.lower()) if t not in self.stop_words])

    def origins(self, text: str) -> dict[str, tuple[str, ...]]:
        """Each of the text's terms (in text order) with the text's words it came from (a stem's words, else itself).

        >>> Analysis("snowball").origins("refunds and a refund")
        {'refund': ('refunds', 'refund')}
        """
        words = [t for t in _TOKEN_RE.findall(text.lower()) if t not in self.stop_words]
        out: dict[str, list[str]] = {}
        for word, term in zip(words, self.stems(words)):
            seen = out.setdefault(term, [])
            if word not in seen:
                seen.append(word)
        return {t: tuple(ws) for t, ws in out.items()}

    def describe(self) -> str:
        """'no stemmer, the article's stop words', 'Snowball English stemmer, Lucene's stop words'."""
        stem = {"none": "no stemmer", "snowball": "Snowball English stemmer", "porter": "Porter stemmer"}[self.stemmer]
        stop = {
            "article": "the article's 45 stop words",
            "lucene": "Lucene's 33 English stop words",
            "none": "no stop words",
        }[self.stopwords]
        return f"{stem}, {stop}"


ARTICLE_ANALYSIS = Analysis()


@functools.cache
def _stemmer(algorithm: str) -> Stemmer.Stemmer:
    """One PyStemmer stemmer per algorithm (it caches stems itself)."""
    return Stemmer.Stemmer(algorithm)


def tokenize(text: str, analysis: Analysis = ARTICLE_ANALYSIS) -> list[str]:
    """Lower-case `[a-z0-9]+` tokens minus the stop words, in text order (the article's `token`); another
    `analysis` drops its stop words and stems."""
    if analysis.is_article:
        return [t for t in _TOKEN_RE.findall(text.lower()) if t not in STOP_WORDS]
    return analysis.analyse(text)
