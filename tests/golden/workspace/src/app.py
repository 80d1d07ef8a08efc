from util import average


def report(counts):
    # TODO: handle an empty inventory
    return f"average stock: {average(counts):.1f}"


if __name__ == "__main__":
    print(report([]))
