"""The two scalar rules every path of the lab computes with, each stated once: BM25's weight of one term in one
document, and the ranking rule. Plain functions over numpy arrays and scalars alike; the compiled kernels inline
these very functions (numba compiles without fast-math, so the bits are the same), and the numpy references
(`retrievers.bm25`, `retrievers.ranking`) call them."""


def bm25_weight(f, idf, norm, k1p1):
    """One term's BM25 weight in one document, idf * (f * (k1 + 1)) / (f + norm), with f its count there, idf its
    idf, norm the document's `length_norm` and k1p1 = k1 + 1.

    The single home of BM25's formula, in this operation order.

    >>> float(bm25_weight(2.0, 1.5, 1.2, 2.2))  # 1.5 * (2 * 2.2) / (2 + 1.2)
    2.0625
    """
    return idf * ((f * k1p1) / (f + norm))


def ranks_before(s1, key1, s2, key2):
    """The ranking rule: (score s1, tie key key1) ranks before (s2, key2), by score descending, then tie key
    ascending (the tie key is the document's position in id order, so ties go by document id).

    >>> bool(ranks_before(0.5, 3, 0.5, 7)), bool(ranks_before(0.4, 0, 0.5, 7))
    (True, False)
    """
    return (s1 > s2) | ((s1 == s2) & (key1 < key2))
