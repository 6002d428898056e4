"""The hidden parts of the kata `grouped_query_attention`: checks, statements, Chinese, variants, reference test."""
