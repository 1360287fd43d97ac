"""What is kept between runs: the signed cache, file digests, derived facts, results."""
