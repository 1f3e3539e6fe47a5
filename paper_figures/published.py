"""The published values of Laber & Murphy (2008), Tables 2-5, for side-by-side comparison.

Transcribed from the paper (UAI 2008, Tables 2 and 3 for n = 30, appendix Tables 4 and 5
for n = 50); 1000 repetitions, target coverage 0.95. The paper's column order is
CUD, BS1, BS2, K, M, Y, L. In the paper the n = 50 M and L columns repeat the n = 30 ones
exactly (a copy error in the paper); they are kept as printed.
"""

PAPER_METHODS = ("cud", "bs1", "bs2", "kohavi", "martin", "yang", "langford")
"""Column order of the paper's tables."""

DATASETS = ('spam', 'donut', 'ionosphere', 'heart', 'diabetes', 'outlier', 'three_points', 'abalone', 'liver', 'magic', 'chi2_small', 'mammogram')
"""Row order of the paper's tables."""

LABELS = {'spam': 'Spam', 'donut': 'Donut', 'ionosphere': 'Ionosphere', 'heart': 'Heart', 'diabetes': 'Diabetes', 'outlier': 'Outlier', 'three_points': 'Three Points', 'abalone': 'Abalone', 'liver': 'Liver', 'magic': 'Magic', 'chi2_small': 'chi^2 small', 'mammogram': 'Mammogram'}

PUBLISHED = {
    ('coverage', 30): {
        'spam': dict(zip(PAPER_METHODS, (1.0, 0.478, 0.983, 0.782, 0.632, 0.996, 0.636))),
        'donut': dict(zip(PAPER_METHODS, (0.999, 0.88, 0.908, 0.631, 0.633, 0.937, 0.62))),
        'ionosphere': dict(zip(PAPER_METHODS, (0.998, 0.605, 0.926, 0.816, 0.757, 0.994, 0.747))),
        'heart': dict(zip(PAPER_METHODS, (0.999, 0.406, 0.981, 0.718, 0.475, 0.998, 0.458))),
        'diabetes': dict(zip(PAPER_METHODS, (1.0, 0.654, 0.9, 0.912, 0.986, 0.997, 0.984))),
        'outlier': dict(zip(PAPER_METHODS, (0.988, 0.884, 0.736, 0.808, 0.838, 0.91, 0.961))),
        'three_points': dict(zip(PAPER_METHODS, (0.993, 0.827, 0.717, 0.844, 0.896, 0.753, 0.952))),
        'abalone': dict(zip(PAPER_METHODS, (0.983, 0.963, 0.737, 0.972, 0.991, 0.998, 0.997))),
        'liver': dict(zip(PAPER_METHODS, (0.961, 0.964, 0.878, 0.98, 1.0, 1.0, 1.0))),
        'magic': dict(zip(PAPER_METHODS, (0.998, 0.918, 0.92, 0.961, 0.982, 0.991, 0.992))),
        'chi2_small': dict(zip(PAPER_METHODS, (0.985, 0.958, 0.786, 0.961, 0.982, 0.996, 1.0))),
        'mammogram': dict(zip(PAPER_METHODS, (1.0, 0.678, 0.994, 0.646, 0.426, 0.983, 0.406))),
    },
    ('width', 30): {
        'spam': dict(zip(PAPER_METHODS, (0.469, 0.432, 0.432, 0.315, 0.314, 0.451, 0.354))),
        'donut': dict(zip(PAPER_METHODS, (0.485, 0.59, 0.59, 0.324, 0.324, 0.414, 0.364))),
        'ionosphere': dict(zip(PAPER_METHODS, (0.437, 0.429, 0.429, 0.301, 0.296, 0.501, 0.337))),
        'heart': dict(zip(PAPER_METHODS, (0.459, 0.468, 0.468, 0.319, 0.319, 0.433, 0.359))),
        'diabetes': dict(zip(PAPER_METHODS, (0.433, 0.305, 0.305, 0.307, 0.31, 0.312, 0.35))),
        'outlier': dict(zip(PAPER_METHODS, (0.555, 0.491, 0.491, 0.328, 0.329, 0.456, 0.368))),
        'three_points': dict(zip(PAPER_METHODS, (0.508, 0.476, 0.476, 0.318, 0.317, 0.457, 0.356))),
        'abalone': dict(zip(PAPER_METHODS, (0.617, 0.314, 0.314, 0.331, 0.331, 0.504, 0.371))),
        'liver': dict(zip(PAPER_METHODS, (0.559, 0.372, 0.372, 0.327, 0.326, 0.485, 0.366))),
        'magic': dict(zip(PAPER_METHODS, (0.606, 0.307, 0.307, 0.3, 0.283, 0.464, 0.324))),
        'chi2_small': dict(zip(PAPER_METHODS, (0.595, 0.33, 0.33, 0.329, 0.33, 0.501, 0.351))),
        'mammogram': dict(zip(PAPER_METHODS, (0.464, 0.532, 0.532, 0.321, 0.321, 0.421, 0.361))),
    },
    ('coverage', 50): {
        'spam': dict(zip(PAPER_METHODS, (1.0, 0.172, 0.987, 0.415, 0.632, 0.996, 0.636))),
        'donut': dict(zip(PAPER_METHODS, (0.998, 0.837, 0.904, 0.45, 0.633, 0.882, 0.62))),
        'ionosphere': dict(zip(PAPER_METHODS, (1.0, 0.292, 0.975, 0.575, 0.757, 0.985, 0.747))),
        'heart': dict(zip(PAPER_METHODS, (0.999, 0.072, 0.999, 0.186, 0.475, 0.998, 0.458))),
        'diabetes': dict(zip(PAPER_METHODS, (0.999, 0.654, 0.9, 0.912, 0.986, 0.984, 0.984))),
        'outlier': dict(zip(PAPER_METHODS, (0.984, 0.805, 0.893, 0.702, 0.838, 0.933, 0.961))),
        'three_points': dict(zip(PAPER_METHODS, (0.972, 0.8, 0.812, 0.648, 0.896, 0.624, 0.952))),
        'abalone': dict(zip(PAPER_METHODS, (0.988, 0.96, 0.832, 0.962, 0.991, 0.999, 0.997))),
        'liver': dict(zip(PAPER_METHODS, (0.986, 0.888, 0.888, 0.974, 1.0, 0.988, 1.0))),
        'magic': dict(zip(PAPER_METHODS, (1.0, 0.824, 0.823, 0.95, 0.982, 0.998, 0.992))),
        'chi2_small': dict(zip(PAPER_METHODS, (0.999, 0.955, 0.791, 0.96, 0.982, 0.996, 1.0))),
        'mammogram': dict(zip(PAPER_METHODS, (0.999, 0.317, 0.999, 0.146, 0.426, 0.991, 0.406))),
    },
    ('width', 50): {
        'spam': dict(zip(PAPER_METHODS, (0.418, 0.377, 0.377, 0.25, 0.314, 0.329, 0.354))),
        'donut': dict(zip(PAPER_METHODS, (0.448, 0.529, 0.529, 0.258, 0.324, 0.331, 0.364))),
        'ionosphere': dict(zip(PAPER_METHODS, (0.386, 0.364, 0.364, 0.237, 0.296, 0.315, 0.337))),
        'heart': dict(zip(PAPER_METHODS, (0.409, 0.436, 0.436, 0.254, 0.319, 0.443, 0.359))),
        'diabetes': dict(zip(PAPER_METHODS, (0.433, 0.365, 0.365, 0.247, 0.31, 0.358, 0.35))),
        'outlier': dict(zip(PAPER_METHODS, (0.442, 0.439, 0.439, 0.262, 0.329, 0.328, 0.368))),
        'three_points': dict(zip(PAPER_METHODS, (0.44, 0.413, 0.413, 0.253, 0.317, 0.357, 0.356))),
        'abalone': dict(zip(PAPER_METHODS, (0.523, 0.248, 0.248, 0.264, 0.331, 0.391, 0.371))),
        'liver': dict(zip(PAPER_METHODS, (0.499, 0.304, 0.304, 0.26, 0.326, 0.382, 0.366))),
        'magic': dict(zip(PAPER_METHODS, (0.561, 0.209, 0.209, 0.227, 0.283, 0.35, 0.324))),
        'chi2_small': dict(zip(PAPER_METHODS, (0.401, 0.265, 0.265, 0.236, 0.33, 0.389, 0.351))),
        'mammogram': dict(zip(PAPER_METHODS, (0.419, 0.511, 0.511, 0.255, 0.321, 0.32, 0.361))),
    },
}
"""(measure, n) -> data set -> method -> published value; measure is "coverage" or "width"."""
