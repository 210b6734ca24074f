"""Graph-construction framework: dtypes, shapes, graphs, tensors, errors."""
