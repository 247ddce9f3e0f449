"""Item pipelines: NewsPageRank weights, MongoDB storage."""
