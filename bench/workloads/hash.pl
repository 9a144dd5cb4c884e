# Hash- and string-heavy Perl: builds and prunes a word index.
my %idx;
my @keep;
for my $i (1 .. 300000) {
    my $w = join '', map { chr(97 + ($i * $_ * 7919) % 26) } 1 .. (3 + $i % 9);
    push @{ $idx{$w} }, $i;
    push @keep, [ split //, $w ] if $i % 5 == 0;
    splice(@keep, 0, 1000) if @keep > 5000;
}
print scalar(keys %idx), "\n";
